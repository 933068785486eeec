package web

import (
	"testing"
	"time"
)

// Login links last a minute and work once; sessions last their TTL; a
// user's logout-all ends only that user's sessions and links.
func TestSignIns(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := newSignIns(time.Hour, 0)

	late := s.newLink(7, now)
	if _, _, ok := s.redeem(late, now.Add(defaultLinkTTL)); ok {
		t.Fatal("a link redeemed at its expiry worked")
	}
	tok := s.newLink(7, now)
	sessTok, sess, ok := s.redeem(tok, now.Add(30*time.Second))
	if !ok || sess.uid != 7 || sess.csrf == "" || sessTok == tok {
		t.Fatalf("redeem: ok %v, session %+v", ok, sess)
	}
	if _, _, ok := s.redeem(tok, now.Add(31*time.Second)); ok {
		t.Fatal("a link worked twice")
	}
	if got, ok := s.lookup(sessTok, now.Add(59*time.Minute)); !ok || got != sess {
		t.Fatal("the session ended before its TTL")
	}
	if _, ok := s.lookup(sessTok, now.Add(time.Hour+30*time.Second)); ok {
		t.Fatal("the session outlived its TTL")
	}

	a1, _ := s.open(7, now)
	a2, _ := s.open(7, now)
	b, _ := s.open(8, now)
	unused := s.newLink(7, now)
	if n := s.endAll(7); n != 2 {
		t.Fatalf("endAll ended %d sessions, want 2", n)
	}
	for _, tk := range []string{a1, a2} {
		if _, ok := s.lookup(tk, now); ok {
			t.Error("a session of uid 7 survived endAll")
		}
	}
	if _, ok := s.lookup(b, now); !ok {
		t.Error("uid 8's session ended with uid 7's")
	}
	if _, _, ok := s.redeem(unused, now); ok {
		t.Error("an unused link of uid 7 survived endAll")
	}
}

func TestCSRF(t *testing.T) {
	sess := &session{csrf: newToken()}
	for _, tc := range []struct {
		got  string
		want bool
	}{{sess.csrf, true}, {"", false}, {sess.csrf[:10], false}, {newToken(), false}} {
		if ok := sess.csrfOK(tc.got); ok != tc.want {
			t.Errorf("csrfOK(%q) = %v, want %v", tc.got, ok, tc.want)
		}
	}
}
