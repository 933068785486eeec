package authz

import (
	"testing"
	"time"
)

func TestTokenBucket(t *testing.T) {
	l := NewLimiter(10, 3)
	now := time.Unix(1000, 0)
	user, admin := Caller{UID: 7}, Caller{UID: 8, Role: Admin}
	for i := range 3 {
		if _, limited := l.Take(user, now); limited {
			t.Fatalf("request %d within the burst was limited", i)
		}
	}
	retry, limited := l.Take(user, now)
	if !limited || retry <= 0 || retry > 100*time.Millisecond {
		t.Fatalf("4th request at once: limited=%v retry=%v, want limited with retry in (0,100ms]", limited, retry)
	}
	if _, limited := l.Take(Caller{UID: 9}, now); limited {
		t.Fatal("another uid was limited by uid 7's bucket")
	}
	if _, limited := l.Take(user, now.Add(100*time.Millisecond)); limited {
		t.Fatal("a token did not come back after 1/rate seconds")
	}
	for range 1000 {
		if _, limited := l.Take(admin, now); limited {
			t.Fatal("an administrator was limited")
		}
	}
	if _, limited := (*Limiter)(nil).Take(user, now); limited {
		t.Fatal("a nil limiter limited")
	}
	off := NewLimiter(-1, 1)
	for range 10 {
		if _, limited := off.Take(user, now); limited {
			t.Fatal("a negative rate (off) limited")
		}
	}
	// Full buckets are forgotten, so memory follows active users.
	l.Take(Caller{UID: 10}, now)
	l.Take(user, now.Add(2*time.Minute))
	if _, kept := l.buckets[9]; kept {
		t.Error("a refilled bucket was not swept")
	}
}
