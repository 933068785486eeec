package shim

import (
	"os"
	"path/filepath"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container"
)

// userFiles is what a launch opens as the job's user before its container
// starts: the stdio files, and the binds of the home and the --mount
// sources.
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
	binds, err := MountBinds(id, job.MountRoots, job.Launch.Mounts)
	if err == nil {
		var home []container.Bind
		home, err = homeBind(id, &job.Launch)
		binds = append(home, binds...)
	}
	if err != nil {
		stdio.Close()
		return nil, err
	}
	return &userFiles{stdio: stdio, binds: binds}, nil
}

// homeBind binds the user's home at its own path, writable, when it is a
// directory the user reaches (stat as the user: a home that root, not
// the user, can see, as on a root-squashed NFS, is left out, as is one
// that is the work directory or /). Homes are typically network file
// systems, hence its place on openUserFiles' goroutine.
func homeBind(id Identity, l *api.LaunchRequest) ([]container.Bind, error) {
	h := filepath.Clean(l.Home)
	if l.Home == "" || h == "/" || h == filepath.Clean(l.WorkDir) || !filepath.IsAbs(h) {
		return nil, nil
	}
	var bs []container.Bind
	err := AsUser(id, func() error {
		if homeHook != nil {
			homeHook()
		}
		if st, err := os.Stat(h); err == nil && st.IsDir() {
			bs = []container.Bind{{Source: h, Dest: h, Writable: true}}
		}
		return nil
	})
	return bs, err
}
