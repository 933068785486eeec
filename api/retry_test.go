package api

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// RetryUnconnected tries again only when no connection was made, asks
// next before each new try, and stops at an answer, at next's error or
// when its time is up.
func TestRetryUnconnected(t *testing.T) {
	dial := &net.OpError{Op: "dial", Err: errors.New("connection refused")}
	refused := errors.New("403 from the node")
	b := Backoff{First: time.Millisecond, Max: time.Millisecond, For: time.Second}
	for _, tc := range []struct {
		name      string
		results   []error // try's results in turn
		nextErr   error
		wantTries int
		wantNexts int
		want      error
	}{
		{"answers at once", []error{nil}, nil, 1, 0, nil},
		{"connects on the third try", []error{dial, dial, nil}, nil, 3, 2, nil},
		{"a refusal is the answer", []error{dial, refused}, nil, 2, 1, refused},
		{"next gives up", []error{dial, nil}, errors.New("node DOWN"), 1, 1, errors.New("node DOWN")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tries, nexts := 0, 0
			err := RetryUnconnected(context.Background(), b, func() error {
				tries++
				return tc.results[tries-1]
			}, func(last error) error {
				nexts++
				if !NotConnected(last) {
					t.Errorf("next called after %v", last)
				}
				return tc.nextErr
			})
			if tries != tc.wantTries || nexts != tc.wantNexts {
				t.Errorf("%d tries, %d nexts", tries, nexts)
			}
			if (err == nil) != (tc.want == nil) || err != nil && err.Error() != tc.want.Error() {
				t.Errorf("err %v, want %v", err, tc.want)
			}
		})
	}
	tries := 0
	err := RetryUnconnected(context.Background(), Backoff{First: time.Millisecond, Max: 2 * time.Millisecond, For: 20 * time.Millisecond},
		func() error { tries++; return dial }, func(error) error { return nil })
	if !errors.Is(err, dial) || tries < 2 {
		t.Fatalf("after %d tries: %v, want the dial error once the time is up", tries, err)
	}
}
