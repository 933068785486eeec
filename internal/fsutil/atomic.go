// Package fsutil holds the one way corral writes a file that must survive
// a crash whole or not at all, and its cheaper sibling for files that need
// only outlive a process, not the host.
package fsutil

import (
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces path with data: a synced temporary file renamed
// over it, then the directory synced, so after a crash path holds either
// the old contents or the new ones, never a part. The temporary file's
// name is its own (path.*.tmp), so two processes may write the same file
// at once (noded and a step's runner both record the runner's PID): the
// last rename wins, and neither loses its temporary file to the other.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	return replace(path, data, mode, true)
}

// ReplaceFile replaces path with data as WriteFileAtomic does, whole or
// not at all for every reader, but does not wait for the disk: after a
// crash of the host the file may hold the old contents or be gone. It is
// for files whose meaning ends with the host's processes: a job step's
// own files (its launch, its runner's and tasks' PIDs, its result), which
// noded reads across its own restarts but which a host crash makes moot,
// since the step dies with it. Each sync costs a step launch about a
// millisecond on this VM's disk.
func ReplaceFile(path string, data []byte, mode os.FileMode) error {
	return replace(path, data, mode, false)
}

func replace(path string, data []byte, mode os.FileMode, sync bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = f.Chmod(mode)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if !sync {
		return nil
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
