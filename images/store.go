package images

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/corral-hpc/corral/internal/fsutil"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Image is one name in the store.
type Image struct {
	// Ref is the canonical name:tag (see Canonical).
	Ref string `json:"ref"`
	// ID is the image's config digest ("sha256:..."): equal IDs are the
	// same content and share one unpacked root file system.
	ID string `json:"id"`
	// Digest is the manifest digest when the image came with one.
	Digest string `json:"digest,omitempty"`
	// Source says where it came from: "pull REF" or "import PATH".
	Source string `json:"source"`
	// Size is the unpacked root file system in bytes.
	Size    int64     `json:"size"`
	Created time.Time `json:"created"` // when it entered the store
	// Env, WorkingDir are from the image's config; jobs get the variables
	// they do not set themselves.
	Env        []string `json:"env,omitempty"`
	WorkingDir string   `json:"working_dir,omitempty"`
	// Apps is the config's corral.apps label: the web apps the image
	// serves, as NAME:PORT,... (api.ParseAppsLabel reads it).
	Apps string `json:"apps,omitempty"`
}

// AppsLabel is the image label that declares its web apps.
const AppsLabel = "corral.apps"

// Store is a node's image store rooted at a directory.
type Store struct {
	Root string
	// MaxBytes, if positive, bounds what one image Pull or Import adds
	// may take unpacked. noded sets it for the pulls a job asks for: the
	// store's disk is the node's, and the image is a user's choice.
	MaxBytes int64
	// Registries are the registries Pull may fetch from; the first also
	// serves references that name none (registry.go).
	Registries []string
}

var (
	// ErrNotFound is returned for a name the store does not hold.
	ErrNotFound = errors.New("image not found")
	// ErrTooBig is returned for an image larger than Store.MaxBytes.
	ErrTooBig = errors.New("image too big")
)

const (
	indexFile = "index.json"
	lockFile  = "lock"
	rootfsDir = "rootfs"
	tmpDir    = "tmp"
)

// Open creates the store's directories if needed.
func Open(root string) (*Store, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("image store %q is not an absolute path", root)
	}
	for _, d := range []string{root, filepath.Join(root, rootfsDir), filepath.Join(root, tmpDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("image store: %w", err)
		}
	}
	// Users read image root file systems (through the overlay), never the
	// store's bookkeeping.
	if err := os.Chmod(filepath.Join(root, tmpDir), 0o700); err != nil {
		return nil, err
	}
	return &Store{Root: root}, nil
}

// RootfsPath is the unpacked root file system of image id.
func (s *Store) RootfsPath(id string) string {
	return filepath.Join(s.Root, rootfsDir, strings.TrimPrefix(id, "sha256:"))
}

// List returns every image, sorted by Ref.
func (s *Store) List() ([]Image, error) {
	idx, err := s.readIndex()
	if err != nil {
		return nil, err
	}
	out := make([]Image, 0, len(idx))
	for _, im := range idx {
		out = append(out, im)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref < out[j].Ref })
	return out, nil
}

// Get finds an image by reference (any spelling Canonical accepts), by
// repository@digest, or by ID ("sha256:..." or a unique hex prefix of at
// least 12 characters).
func (s *Store) Get(ref string) (Image, error) {
	idx, err := s.readIndex()
	if err != nil {
		return Image{}, err
	}
	return lookup(idx, ref)
}

func lookup(idx map[string]Image, ref string) (Image, error) {
	if key, err := Canonical(ref); err == nil {
		if im, ok := idx[key]; ok {
			return im, nil
		}
		if repo, dig, ok := strings.Cut(key, "@"); ok {
			for _, im := range idx {
				if (im.Digest == dig || im.ID == dig) && strings.HasPrefix(im.Ref, repo+":") {
					return im, nil
				}
			}
		}
	}
	hex := strings.TrimPrefix(ref, "sha256:")
	if len(hex) >= 12 {
		var found []Image
		ids := map[string]bool{}
		for _, im := range idx {
			if strings.HasPrefix(strings.TrimPrefix(im.ID, "sha256:"), hex) {
				found = append(found, im)
				ids[im.ID] = true
			}
		}
		if len(ids) > 1 {
			return Image{}, fmt.Errorf("%s is ambiguous: %d images match", ref, len(ids))
		}
		if len(found) > 0 {
			sort.Slice(found, func(i, j int) bool { return found[i].Ref < found[j].Ref })
			return found[0], nil
		}
	}
	return Image{}, fmt.Errorf("%w: %s", ErrNotFound, ref)
}

// Remove deletes a name; the root file system goes when no other name
// uses it. A root file system a running job has mounted is kept and the
// call fails, so no job loses its files.
func (s *Store) Remove(ref string) (Image, error) {
	unlock, err := s.lock()
	if err != nil {
		return Image{}, err
	}
	defer unlock()
	idx, err := s.readIndex()
	if err != nil {
		return Image{}, err
	}
	im, err := lookup(idx, ref)
	if err != nil {
		return Image{}, err
	}
	shared := false
	for k, o := range idx {
		if k != im.Ref && o.ID == im.ID {
			shared = true
		}
	}
	dir := s.RootfsPath(im.ID)
	if !shared {
		if used, err := inUse(dir); err != nil {
			return Image{}, err
		} else if used {
			return Image{}, fmt.Errorf("image %s is in use by a running job", im.Ref)
		}
	}
	delete(idx, im.Ref)
	if err := s.writeIndex(idx); err != nil {
		return Image{}, err
	}
	if !shared {
		// Rename first so that a half-removed tree is never taken for an
		// image.
		trash, err := os.MkdirTemp(filepath.Join(s.Root, tmpDir), "rm-")
		if err == nil {
			if err = os.Rename(dir, filepath.Join(trash, "rootfs")); err == nil || errors.Is(err, os.ErrNotExist) {
				err = os.RemoveAll(trash)
			}
		}
		if err != nil {
			return im, fmt.Errorf("removed %s, but not its files: %w", im.Ref, err)
		}
	}
	return im, nil
}

// inUse reports whether an overlay mount uses dir as a lower layer.
func inUse(dir string) (bool, error) {
	b, err := os.ReadFile("/proc/thread-self/mountinfo")
	if err != nil {
		return false, err
	}
	return strings.Contains(string(b), "lowerdir="+dir+",") || strings.Contains(string(b), "lowerdir="+dir+" ") ||
		strings.Contains(string(b), "lowerdir="+dir+"\n"), nil
}

// record adds or replaces im under its Ref. The caller holds the lock.
func (s *Store) record(im Image) error {
	idx, err := s.readIndex()
	if err != nil {
		return err
	}
	idx[im.Ref] = im
	return s.writeIndex(idx)
}

func (s *Store) readIndex() (map[string]Image, error) {
	idx := map[string]Image{}
	b, err := os.ReadFile(filepath.Join(s.Root, indexFile))
	if errors.Is(err, os.ErrNotExist) {
		return idx, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("image store index %s: %w", filepath.Join(s.Root, indexFile), err)
	}
	return idx, nil
}

func (s *Store) writeIndex(idx map[string]Image) error {
	b, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(filepath.Join(s.Root, indexFile), append(b, '\n'), 0o644)
}

// lock takes the store's writer lock (flock, so it also serializes
// separate processes: noded and an admin's command on the node).
func (s *Store) lock() (func(), error) {
	f, err := os.OpenFile(filepath.Join(s.Root, lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN); f.Close() }, nil
}
