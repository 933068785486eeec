// Package fsutil holds the one way corral writes a file that must survive
// a crash whole or not at all.
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
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = f.Chmod(mode)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
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
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
