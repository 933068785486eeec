package images

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	securejoin "github.com/cyphar/filepath-securejoin"
	"golang.org/x/sys/unix"
)

// Unpack writes a tar stream (a flattened image, whiteouts already
// applied by mutate.Extract, or an OCI layout tar) into dir, which must
// not exist. Every path is resolved inside dir (symlinks in the archive
// cannot point a later entry outside it); device nodes are skipped (a
// job gets its /dev from the container), ownership (when root) and
// modes are kept.
func Unpack(r io.Reader, dir string) error { return unpack(r, dir, 0) }

// entryCost is what every archive entry is counted as on top of its data
// against a size limit: an inode and a block, so that a million empty
// files are not free.
const entryCost = 4096

// unpack is Unpack that fails with ErrTooBig once the entries would take
// more than limit bytes (0: no limit), before writing the one that would.
func unpack(r io.Reader, dir string, limit int64) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	type dirTime struct {
		path string
		t    time.Time
	}
	var dirs []dirTime
	asRoot := os.Geteuid() == 0 // others cannot give files away; tests
	var used int64
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the archive: %w", err)
		}
		name := filepath.Clean("/" + h.Name)
		if name == "/" {
			continue
		}
		if used += entryCost + max(h.Size, 0); limit > 0 && used > limit {
			return fmt.Errorf("%w: more than %d MiB unpacked (at %s)", ErrTooBig, limit>>20, name)
		}
		parent, err := securejoin.SecureJoin(dir, filepath.Dir(name))
		if err != nil {
			return err
		}
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return err
		}
		target := filepath.Join(parent, filepath.Base(name))
		mode := os.FileMode(h.Mode & 0o777)
		switch h.Typeflag {
		case tar.TypeDir:
			if st, err := os.Lstat(target); err == nil && !st.IsDir() {
				os.Remove(target)
			}
			if err := os.Mkdir(target, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			dirs = append(dirs, dirTime{target, h.ModTime})
		case tar.TypeReg:
			os.Remove(target)
			f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("writing %s: %w", name, err)
			}
		case tar.TypeSymlink:
			os.Remove(target)
			if err := os.Symlink(h.Linkname, target); err != nil {
				return err
			}
		case tar.TypeLink:
			src, err := securejoin.SecureJoin(dir, filepath.Clean("/"+h.Linkname))
			if err != nil {
				return err
			}
			os.Remove(target)
			if err := os.Link(src, target); err != nil {
				return fmt.Errorf("hard link %s -> %s: %w", name, h.Linkname, err)
			}
			continue // shares the inode: owner and mode are the source's
		case tar.TypeFifo:
			os.Remove(target)
			if err := unix.Mkfifo(target, uint32(mode)); err != nil {
				return err
			}
		default:
			continue // devices and anything unknown
		}
		if asRoot {
			if err := os.Lchown(target, h.Uid, h.Gid); err != nil {
				return err
			}
		}
		if h.Typeflag != tar.TypeSymlink {
			// After chown, which clears set-id bits.
			if err := os.Chmod(target, mode|setIDBits(h.Mode)); err != nil {
				return err
			}
			if h.Typeflag == tar.TypeReg {
				_ = os.Chtimes(target, h.ModTime, h.ModTime)
			}
		}
	}
	// Directory times last: writing into a directory changes its mtime.
	// Not following symlinks: a later entry may have replaced the
	// directory with a link out of dir (to the host's /etc).
	for i := len(dirs) - 1; i >= 0; i-- {
		ts := unix.NsecToTimespec(dirs[i].t.UnixNano())
		_ = unix.UtimesNanoAt(unix.AT_FDCWD, dirs[i].path, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
	}
	return nil
}

// setIDBits maps tar's set-id and sticky bits to os.FileMode's.
func setIDBits(m int64) os.FileMode {
	var out os.FileMode
	if m&04000 != 0 {
		out |= os.ModeSetuid
	}
	if m&02000 != 0 {
		out |= os.ModeSetgid
	}
	if m&01000 != 0 {
		out |= os.ModeSticky
	}
	return out
}

// tarDir streams dir as a tar archive, paths relative to dir.
func tarDir(dir string) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			if rel == "." {
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			link := ""
			if fi.Mode()&os.ModeSymlink != 0 {
				if link, err = os.Readlink(p); err != nil {
					return err
				}
			}
			h, err := tar.FileInfoHeader(fi, link)
			if err != nil {
				return nil // sockets and the like are not part of an image
			}
			h.Name = filepath.ToSlash(rel)
			if fi.IsDir() {
				h.Name += "/"
			}
			h.Uname, h.Gname = "", ""
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			if fi.Mode().IsRegular() {
				f, err := os.Open(p)
				if err != nil {
					return err
				}
				_, err = io.Copy(tw, f)
				f.Close()
				return err
			}
			return nil
		})
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
	}()
	return pr
}
