// Package fsutil holds the one way corral writes a file that must survive
// a crash whole or not at all.
package fsutil

import (
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces path with data: a synced temporary file renamed
// over it, then the directory synced, so after a crash path holds either
// the old contents or the new ones, never a part.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
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
