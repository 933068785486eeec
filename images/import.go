package images

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Platform is the platform pulled and picked from multi-platform images.
var Platform = v1.Platform{OS: "linux", Architecture: runtime.GOARCH}

// Pull fetches ref from its registry, which must be one of s.Registries
// (registry.go), and stores it under ref. Registries on localhost and
// 127.0.0.1 are spoken to over plain HTTP (as go-containerregistry does);
// others need HTTPS.
func (s *Store) Pull(ctx context.Context, ref string) (Image, error) {
	key, err := Canonical(ref)
	if err != nil {
		return Image{}, err
	}
	r, err := s.resolvePull(ref)
	if err != nil {
		return Image{}, err
	}
	img, err := remote.Image(r, remote.WithContext(ctx), remote.WithPlatform(Platform),
		remote.WithAuth(authn.Anonymous), remote.WithTransport(pullTransport))
	if err != nil {
		return Image{}, fmt.Errorf("pulling %s: %v", ref, err)
	}
	return s.add(img, key, "pull "+ref)
}

// Import stores the image at source under ref (name:tag). source is an
// OCI image layout (directory or tar), a `docker save` archive, or a
// directory holding a plain root file system.
func (s *Store) Import(ctx context.Context, ref, source string) (Image, error) {
	key, err := Canonical(ref)
	if err != nil {
		return Image{}, err
	}
	if strings.Contains(key, "@") {
		return Image{}, fmt.Errorf("import needs a name:tag, not a digest: %s", ref)
	}
	abs, err := filepath.Abs(source)
	if err != nil {
		return Image{}, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return Image{}, fmt.Errorf("import source: %w", err)
	}
	var img v1.Image
	switch {
	case st.IsDir() && exists(filepath.Join(abs, "oci-layout")):
		img, err = fromLayout(abs, key)
	case st.IsDir():
		img, err = fromRootfs(abs)
	case st.Mode().IsRegular():
		img, err = s.fromTar(abs, key)
		if c, ok := img.(*cleanupImage); ok {
			defer os.RemoveAll(c.dir)
		}
	default:
		err = fmt.Errorf("%s is neither a directory nor a tar file", source)
	}
	if err != nil {
		return Image{}, fmt.Errorf("importing %s: %w", source, err)
	}
	return s.add(img, key, "import "+abs)
}

// add unpacks img (unless its root file system is already here) and
// records it under key.
func (s *Store) add(img v1.Image, key, source string) (Image, error) {
	cfgName, err := img.ConfigName()
	if err != nil {
		return Image{}, fmt.Errorf("reading the image config: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return Image{}, fmt.Errorf("reading the image config: %w", err)
	}
	if cfg.OS != "" && cfg.OS != "linux" {
		return Image{}, fmt.Errorf("image is for %s/%s, not linux", cfg.OS, cfg.Architecture)
	}
	im := Image{Ref: key, ID: cfgName.String(), Source: source, Created: time.Now().UTC(),
		Env: cfg.Config.Env, WorkingDir: cfg.Config.WorkingDir, Apps: cfg.Config.Labels[AppsLabel]}
	if d, err := img.Digest(); err == nil {
		im.Digest = d.String()
	}
	unlock, err := s.lock()
	if err != nil {
		return Image{}, err
	}
	defer unlock()
	dir := s.RootfsPath(im.ID)
	if !exists(dir) {
		tmp, err := os.MkdirTemp(filepath.Join(s.Root, tmpDir), "unpack-")
		if err != nil {
			return Image{}, err
		}
		defer os.RemoveAll(tmp)
		rootfs := filepath.Join(tmp, "rootfs")
		rc := mutate.Extract(img)
		err = unpack(rc, rootfs, s.MaxBytes)
		rc.Close()
		if err != nil {
			return Image{}, fmt.Errorf("unpacking the image: %w", err)
		}
		// The root of the image is what / is in the job: world-readable.
		if err := os.Chmod(rootfs, 0o755); err != nil {
			return Image{}, err
		}
		if err := os.Rename(rootfs, dir); err != nil {
			return Image{}, err
		}
	}
	im.Size = duSize(dir)
	if err := s.record(im); err != nil {
		return Image{}, err
	}
	return im, nil
}

// fromLayout picks the image in an OCI layout: the only one, the one
// annotated with key's tag, or the one for Platform.
func fromLayout(dir, key string) (v1.Image, error) {
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, err
	}
	return pickImage(idx, key)
}

func pickImage(idx v1.ImageIndex, key string) (v1.Image, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) == 0 {
		return nil, errors.New("the layout holds no image")
	}
	tag := key[strings.LastIndex(key, ":")+1:]
	var chosen *v1.Descriptor
	for i, d := range m.Manifests {
		ann := d.Annotations["org.opencontainers.image.ref.name"]
		if ann != "" && (ann == tag || ann == key || strings.HasSuffix(ann, ":"+tag)) {
			chosen = &m.Manifests[i]
			break
		}
		if d.Platform != nil && d.Platform.Satisfies(Platform) && chosen == nil {
			chosen = &m.Manifests[i]
		}
	}
	if chosen == nil {
		if len(m.Manifests) > 1 {
			return nil, fmt.Errorf("the layout holds %d images and none is tagged %q or for %s", len(m.Manifests), tag, Platform.String())
		}
		chosen = &m.Manifests[0]
	}
	if chosen.MediaType.IsIndex() {
		child, err := idx.ImageIndex(chosen.Digest)
		if err != nil {
			return nil, err
		}
		return pickImage(child, key)
	}
	return idx.Image(chosen.Digest)
}

// fromTar reads a `docker save` archive (it has manifest.json) with
// go-containerregistry's tarball package, or unpacks an OCI layout tar
// into the store's tmp directory and reads it as a layout.
func (s *Store) fromTar(path, key string) (v1.Image, error) {
	kind, err := tarKind(path)
	if err != nil {
		return nil, err
	}
	switch kind {
	case "docker":
		var tag *name.Tag
		if t, err := name.NewTag(key); err == nil {
			if m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(path) }); err == nil && len(m) > 1 {
				tag = &t
			}
		}
		return tarball.ImageFromPath(path, tag)
	case "oci":
		tmp, err := os.MkdirTemp(filepath.Join(s.Root, tmpDir), "layout-")
		if err != nil {
			return nil, err
		}
		// The layout's blobs are read lazily: Import removes them after
		// the image is unpacked.
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := Unpack(f, filepath.Join(tmp, "layout")); err != nil {
			os.RemoveAll(tmp)
			return nil, err
		}
		img, err := fromLayout(filepath.Join(tmp, "layout"), key)
		if err != nil {
			os.RemoveAll(tmp)
			return nil, err
		}
		return &cleanupImage{Image: img, dir: tmp}, nil
	}
	return nil, fmt.Errorf("%s is neither an OCI layout tar nor a docker save archive", path)
}

// cleanupImage is an image read from a temporary layout, which Import
// removes once the image is unpacked.
type cleanupImage struct {
	v1.Image
	dir string
}

// tarKind looks for the marker files at the top of a tar.
func tarKind(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	oci := false
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("%s is not a tar archive: %v", path, err)
		}
		switch strings.TrimPrefix(h.Name, "./") {
		case "manifest.json":
			return "docker", nil
		case "oci-layout":
			oci = true
		}
	}
	if oci {
		return "oci", nil
	}
	return "", nil
}

// fromRootfs makes a one-layer image of a directory.
func fromRootfs(dir string) (v1.Image, error) {
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return tarDir(dir), nil })
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	return mutate.ConfigFile(img, cf)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func duSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
