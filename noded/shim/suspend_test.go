package shim_test

import (
	"testing"
	"time"

	"github.com/corral-hpc/corral/noded/shim"
)

// The time limit does not count suspended time: while the job is
// suspended the limit waits, and after each resume it grants the
// suspension's length once.
func TestLimitExtension(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if wait, g := shim.LimitExtension(dir, 0); wait != 0 || g != 0 {
		t.Errorf("never suspended: wait %s, granted %s; want the limit reached", wait, g)
	}
	record := func(frozen bool, at time.Time) {
		t.Helper()
		if err := shim.RecordSuspension(dir, frozen, at); err != nil {
			t.Fatal(err)
		}
	}
	record(true, t0)
	record(true, t0.Add(5*time.Second)) // a repeated suspend changes nothing
	if wait, g := shim.LimitExtension(dir, 0); wait != time.Second || g != 0 {
		t.Errorf("suspended: wait %s, granted %s; want a second's wait, nothing granted", wait, g)
	}
	record(false, t0.Add(30*time.Second))
	wait, granted := shim.LimitExtension(dir, 0)
	if wait != 30*time.Second || granted != 30*time.Second {
		t.Errorf("after 30 s suspended: wait %s, granted %s", wait, granted)
	}
	if wait, g := shim.LimitExtension(dir, granted); wait != 0 || g != granted {
		t.Errorf("granted already: wait %s, granted %s; want the limit reached", wait, g)
	}
	record(true, t0.Add(40*time.Second))
	record(false, t0.Add(50*time.Second))
	if wait, g := shim.LimitExtension(dir, granted); wait != 10*time.Second || g != 40*time.Second {
		t.Errorf("a second suspension of 10 s: wait %s, granted %s", wait, g)
	}
	if s, err := shim.ReadSuspension(dir); err != nil || s.Since != nil || s.Total != 40*time.Second {
		t.Errorf("suspension record %+v, %v", s, err)
	}
}
