package shim

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container"
	"golang.org/x/sys/unix"
)

// userFiles is what a launch opens as the job's user before its container
// starts: the stdio files, and the binds of the work directory, the home
// and the --mount sources, each with the identity of the file checked
// (container.Bind.Checked).
type userFiles struct {
	stdio *jobStdio
	binds []container.Bind
}

func (u *userFiles) Close() { u.stdio.Close() }

// openingHook and homeHook, if set (tests), run first in openUserFiles'
// goroutine and before the home is looked at: they stand in for a file
// system that hangs.
var openingHook, homeHook func()

// openUserFiles opens the job's files and checks its home and mount
// sources as the user. Any of that can block in the kernel for as long as a file system
// does not answer (an NFS server gone, a FUSE daemon stopped), and the
// paths are the user's choice. So it runs on a goroutine of its own while
// this one keeps obeying the job: a cancel, or the time limit (counted
// from now, as the job is already RUNNING for its owner), ends the launch
// at once with a CANCELLED or TIMEOUT result, and files the goroutine
// opens after that are closed. A thread stuck in the kernel stays stuck,
// but the job's end is reported without waiting for it.
func openUserFiles(id Identity, job *Job, ctl Controls) (*userFiles, *Result, error) {
	type opened struct {
		u   *userFiles
		err error
	}
	done := make(chan opened, 1)
	abandoned := make(chan struct{})
	go func() {
		if openingHook != nil {
			openingHook()
		}
		u, err := openUserFilesNow(id, job)
		select {
		case done <- opened{u, err}:
		case <-abandoned:
			if u != nil {
				u.Close()
			}
		}
	}()
	var limit <-chan time.Time
	if tl := job.Launch.TimeLimit; tl > 0 && tl < maxTimeLimit {
		t := time.NewTimer(time.Duration(tl) * time.Second)
		defer t.Stop()
		limit = t.C
	}
	select {
	case o := <-done:
		return o.u, nil, o.err
	case <-ctl.Cancel:
		close(abandoned)
		return nil, &Result{State: api.StateCancelled, End: time.Now(),
			Message: "cancelled while the job's files were being opened"}, nil
	case <-limit:
		close(abandoned)
		return nil, &Result{State: api.StateTimeout, End: time.Now(),
			Message: "time limit reached while the job's files were being opened (a file system that does not answer?)"}, nil
	}
}

func openUserFilesNow(id Identity, job *Job) (*userFiles, error) {
	stdio, err := openStdio(id, &job.Launch, job.Node)
	if err != nil {
		return nil, err
	}
	binds, err := dirBinds(id, &job.Launch)
	if err == nil {
		var mounts []container.Bind
		mounts, err = MountBinds(id, job.MountRoots, job.Launch.Mounts)
		binds = append(binds, mounts...)
	}
	if err != nil {
		stdio.Close()
		return nil, err
	}
	return &userFiles{stdio: stdio, binds: binds}, nil
}

// dirBinds bind the work directory (unless it is /) and the user's home
// at their own paths, writable. Each is looked at as the user (search
// permission on the directory and every one above it), on
// openUserFiles' goroutine, since homes are typically network file
// systems. A home the user cannot reach is left out, as is one that is
// the work directory or /: root may reach a home the user cannot (below
// a 0700 root directory), and the bind would make it reachable, and
// writable, in the job.
func dirBinds(id Identity, l *api.LaunchRequest) ([]container.Bind, error) {
	var bs []container.Bind
	err := AsUser(id, func() error {
		if l.WorkDir != "/" {
			var st unix.Stat_t
			if err := unix.Stat(l.WorkDir+"/.", &st); err != nil {
				return fmt.Errorf("work directory %s: %w", l.WorkDir, err)
			}
			bs = append(bs, container.Bind{Source: l.WorkDir, Dest: l.WorkDir, Writable: true, Checked: container.IDOf(&st)})
		}
		h := filepath.Clean(l.Home)
		if l.Home == "" || h == "/" || h == filepath.Clean(l.WorkDir) || !filepath.IsAbs(h) {
			return nil
		}
		if homeHook != nil {
			homeHook()
		}
		var st unix.Stat_t
		if unix.Stat(h+"/.", &st) == nil {
			bs = append(bs, container.Bind{Source: h, Dest: h, Writable: true, Checked: container.IDOf(&st)})
		}
		return nil
	})
	return bs, err
}
