package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Suspending a job (scontrol suspend) freezes its cgroup: every process
// in it, the steps' tasks too, stops where it is until thawed, and a
// signal sent meanwhile waits. The v1 freezer controller is used where
// the job's cgroup has one (v1 and hybrid hosts), else cgroup2's
// cgroup.freeze. The kernel freezes asynchronously, so Freeze waits until
// it reports the change done.

// freezeWait bounds the wait for the kernel to finish a freeze or thaw.
var freezeWait = 10 * time.Second

// Freeze freezes (frozen) or thaws the job cgroup whose directories by
// controller are dirs ("" for cgroup2, as libcontainer reports them).
func Freeze(dirs map[string]string, frozen bool) error {
	file, want, done, err := freezer(dirs, frozen)
	if err != nil {
		return err
	}
	if err := os.WriteFile(file, []byte(want), 0); err != nil {
		return fmt.Errorf("freezing the job's cgroup: %w", err)
	}
	for deadline := time.Now().Add(freezeWait); ; {
		ok, err := done()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the kernel did not finish writing %s to %s within %s", want, file, freezeWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Frozen reports whether the job cgroup is frozen.
func Frozen(dirs map[string]string) (bool, error) {
	_, _, done, err := freezer(dirs, true)
	if err != nil {
		return false, err
	}
	return done()
}

// freezer is the file that freezes the cgroup, what to write to it, and
// a check of whether the cgroup is in the asked state.
func freezer(dirs map[string]string, frozen bool) (file, want string, done func() (bool, error), err error) {
	if dir := dirs["freezer"]; dir != "" {
		want = "THAWED"
		if frozen {
			want = "FROZEN"
		}
		return filepath.Join(dir, "freezer.state"), want, func() (bool, error) {
			st, err := readString(dir, "freezer.state") // FREEZING while under way
			return st == want, err
		}, nil
	}
	if dir := dirs[""]; dir != "" {
		want, state := "0", int64(0)
		if frozen {
			want, state = "1", 1
		}
		return filepath.Join(dir, "cgroup.freeze"), want, func() (bool, error) {
			n, err := readKeyed(dir, "cgroup.events", "frozen")
			return n == state, err
		}, nil
	}
	return "", "", nil, fmt.Errorf("the job's cgroup has no freezer (directories %v)", dirs)
}
