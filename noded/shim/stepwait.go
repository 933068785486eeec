package shim

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// jobStartWait bounds a runner's wait for its job's container. noded
// starts a step's runner as soon as the launch arrives, also while the
// job's shim still sets the container up (srun outside an allocation
// launches its step right after the grant), so that the runner's own
// start-up and its connection to srun overlap the container's start.
// The bound is only a backstop: a job that ends before it runs writes
// result.json, and a step noded cancels closes StepControls.Cancel.
var jobStartWait = 10 * time.Minute

// errStepCancelled is waitJobReady's answer when the step is cancelled
// first.
var errStepCancelled = errors.New("cancelled before the tasks started")

// waitJobReady returns once the job in jobDir runs (its shim wrote
// StartedFile) with a nil spawner, or, as soon as the shim has published
// its spawn socket while the container still starts, that socket: the
// runner queues its tasks there (stepearly.go). Else an error: the job
// ended first (result.json, or its directory went away), the step was
// cancelled, or jobStartWait passed. It waits on inotify for the shim's
// rename of those files into place.
func waitJobReady(jobDir string, job *Job, cancel <-chan struct{}) (*initSpawner, error) {
	var sp *initSpawner
	tried := false
	err := waitJob(jobDir, cancel, func() bool {
		if execOnly || tried {
			return false
		}
		if _, err := os.Stat(filepath.Join(jobDir, SpawnFile)); err != nil {
			return false
		}
		tried = true // once: else wait for the started file, as before
		s, err := openShimSpawner(jobDir, job)
		if err != nil {
			log.Printf("waiting for the container to start: %v", err)
			return false
		}
		sp = s
		return true
	})
	return sp, err
}

// waitJob is waitJobReady's wait, over when the job has started or early
// says so (asked each time the directory changes before the start).
func waitJob(jobDir string, cancel <-chan struct{}, early func() bool) error {
	look := func() (bool, error) {
		if _, err := os.Stat(filepath.Join(jobDir, StartedFile)); err == nil {
			return true, nil
		}
		if _, err := os.Stat(filepath.Join(jobDir, ResultFile)); err == nil {
			return false, errors.New("the job ended before its container started")
		} else if _, err := os.Stat(jobDir); err != nil {
			return false, fmt.Errorf("the job ended before its container started (%v)", err)
		}
		return early != nil && early(), nil
	}
	if ok, err := look(); ok || err != nil {
		return err
	}
	woke, stop, err := watchDir(jobDir)
	if err != nil {
		return err
	}
	defer stop()
	limit := time.NewTimer(jobStartWait)
	defer limit.Stop()
	for {
		// Look after the watch is in place: a rename just before it is seen here.
		if ok, err := look(); ok || err != nil {
			return err
		}
		select {
		case <-woke:
		case <-cancel:
			return errStepCancelled
		case <-limit.C:
			return fmt.Errorf("the job's container did not start within %v", jobStartWait)
		}
	}
}

// watchDir signals woke (coalesced) whenever a file is created in or
// renamed into dir, or dir itself goes away; stop ends the watch.
func watchDir(dir string) (woke <-chan struct{}, stop func(), err error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, nil, fmt.Errorf("watching the job directory: %w", err)
	}
	f := os.NewFile(uintptr(fd), "inotify") // non-blocking: Close ends a Read
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("watching the job directory: %w", err)
	}
	c := make(chan struct{}, 1)
	go func() {
		buf := make([]byte, 4096)
		for {
			_, err := f.Read(buf)
			select {
			case c <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	return c, func() { f.Close() }, nil
}
