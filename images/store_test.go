package images

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/images/imagetest"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func mustStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestImportSources imports the same kind of image from every source
// format and checks what was unpacked and recorded.
func TestImportSources(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	// An OCI layout directory holding two tags, told apart by annotation.
	layoutDir := filepath.Join(src, "layout")
	lp, err := layout.Write(layoutDir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"1.13", "2.2"} {
		if err := lp.AppendImage(imagetest.MustImage(t, "layout-"+v, nil),
			layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": v})); err != nil {
			t.Fatal(err)
		}
	}
	// The same layout as a tar.
	layoutTar := filepath.Join(src, "layout.tar")
	writeTar(t, layoutTar, layoutDir)
	// A docker save archive.
	dockerTar := filepath.Join(src, "docker.tar")
	tag, _ := name.NewTag("example/app:3")
	if err := tarball.WriteToFile(dockerTar, tag, imagetest.MustImage(t, "docker", nil)); err != nil {
		t.Fatal(err)
	}
	// A plain root file system.
	rootDir := filepath.Join(src, "rootfs")
	os.MkdirAll(filepath.Join(rootDir, "bin"), 0o755)
	os.WriteFile(filepath.Join(rootDir, "VERSION"), []byte("plain\n"), 0o644)
	os.Symlink("/bin/busybox", filepath.Join(rootDir, "bin", "sh"))

	cases := []struct {
		ref, source, version string
	}{
		{"tensorflow:2.2", layoutDir, "layout-2.2"},
		{"tensorflow:1.13", layoutTar, "layout-1.13"},
		{"app:3", dockerTar, "docker"},
		{"plain:1", rootDir, "plain"},
	}
	s := mustStore(t)
	for _, c := range cases {
		t.Run(c.ref, func(t *testing.T) {
			im, err := s.Import(ctx, c.ref, c.source)
			if err != nil {
				t.Fatal(err)
			}
			if im.Ref != c.ref || !strings.HasPrefix(im.ID, "sha256:") || im.Size == 0 {
				t.Errorf("recorded %+v", im)
			}
			if got := mustRead(t, filepath.Join(s.RootfsPath(im.ID), "VERSION")); got != c.version+"\n" {
				t.Errorf("/VERSION = %q, want %q", got, c.version)
			}
			if l, err := os.Readlink(filepath.Join(s.RootfsPath(im.ID), "bin", "sh")); err != nil || !strings.HasSuffix(l, "busybox") {
				t.Errorf("/bin/sh -> %q, %v", l, err)
			}
			got, err := s.Get(c.ref)
			if err != nil || got.ID != im.ID {
				t.Errorf("Get(%s) = %+v, %v", c.ref, got, err)
			}
		})
	}
	list, err := s.List()
	if err != nil || len(list) != len(cases) {
		t.Fatalf("List = %v, %v", list, err)
	}
	// Leftovers of tar imports are gone.
	if ents, _ := os.ReadDir(filepath.Join(s.Root, tmpDir)); len(ents) != 0 {
		t.Errorf("tmp holds %d entries after imports", len(ents))
	}
}

// TestPullTwoVersions pulls two tags of one name from the loopback
// registry: each keeps its own /VERSION, and the same content under a
// second name shares the unpacked tree until both names are gone.
func TestPullTwoVersions(t *testing.T) {
	ctx := context.Background()
	reg := imagetest.MustRegistry(t)
	imagetest.MustPush(t, reg+"/pytorch:1.5", imagetest.MustImage(t, "1.5", nil))
	imagetest.MustPush(t, reg+"/pytorch:2.0", imagetest.MustImage(t, "2.0", nil))
	s := mustStore(t)
	a, err := s.Pull(ctx, reg+"/pytorch:1.5")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Pull(ctx, reg+"/pytorch:2.0")
	if err != nil {
		t.Fatal(err)
	}
	if a.ID == b.ID {
		t.Fatal("two versions share an ID")
	}
	for _, c := range []struct{ ref, want string }{{reg + "/pytorch:1.5", "1.5\n"}, {reg + "/pytorch:2.0", "2.0\n"}} {
		im, err := s.Get(c.ref)
		if err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, filepath.Join(s.RootfsPath(im.ID), "VERSION")); got != c.want {
			t.Errorf("%s: /VERSION %q, want %q", c.ref, got, c.want)
		}
	}
	if im, err := s.Get(reg + "/pytorch@" + a.Digest); err != nil || im.ID != a.ID {
		t.Errorf("by digest: %+v, %v", im, err)
	}
	if _, err := s.Pull(ctx, reg+"/pytorch:9.9"); err == nil {
		t.Error("pulling a missing tag succeeded")
	}
	// A second name for the same content shares the root file system.
	alias, err := s.Pull(ctx, reg+"/pytorch:1.5")
	if err != nil || alias.ID != a.ID {
		t.Fatal(err)
	}
	imagetest.MustPush(t, reg+"/torch:old", imagetest.MustImage(t, "1.5", nil))
	c, err := s.Pull(ctx, reg+"/torch:old")
	if err != nil || c.ID != a.ID {
		t.Fatalf("same content, ID %s vs %s (%v)", c.ID, a.ID, err)
	}
	if _, err := s.Remove(reg + "/pytorch:1.5"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.RootfsPath(a.ID)); err != nil {
		t.Error("shared root file system removed with the first of two names")
	}
	if _, err := s.Remove(reg + "/torch:old"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.RootfsPath(a.ID)); !os.IsNotExist(err) {
		t.Error("root file system kept after its last name was removed")
	}
	if _, err := s.Remove(reg + "/torch:old"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second remove: %v, want not found", err)
	}
	if list, _ := s.List(); len(list) != 1 || list[0].ID != b.ID {
		t.Errorf("left: %+v", list)
	}
}

func TestImportRefusals(t *testing.T) {
	ctx := context.Background()
	s := mustStore(t)
	junk := filepath.Join(t.TempDir(), "junk")
	os.WriteFile(junk, []byte("not a tar at all, just words"), 0o644)
	emptyTar := filepath.Join(t.TempDir(), "empty.tar")
	writeTar(t, emptyTar, t.TempDir())
	for _, c := range []struct{ ref, src, want string }{
		{"x:1", "/nonexistent/source", "no such file"},
		{"x:1", junk, "not a tar"},
		{"x:1", emptyTar, "neither an OCI layout tar nor a docker save"},
		{"UPPER:1", t.TempDir(), "invalid image reference"},
		{"x@sha256:" + strings.Repeat("a", 64), t.TempDir(), "name:tag"},
	} {
		if _, err := s.Import(ctx, c.ref, c.src); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Import(%s, %s) = %v, want %q", c.ref, c.src, err, c.want)
		}
	}
	if list, _ := s.List(); len(list) != 0 {
		t.Errorf("refused imports left %v", list)
	}
}

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		"ubuntu":                                "ubuntu:latest",
		"docker.io/library/ubuntu:24.04":        "ubuntu:24.04",
		"tensorflow:2.2":                        "tensorflow:2.2",
		"127.0.0.1:5000/team/app:1":             "127.0.0.1:5000/team/app:1",
		"registry.example.com/a/b":              "registry.example.com/a/b:latest",
		"app@sha256:" + strings.Repeat("0", 64): "app@sha256:" + strings.Repeat("0", 64),
	} {
		if got, err := Canonical(in); err != nil || got != want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "UPPER", "a b", "app:"} {
		if _, err := Canonical(bad); err == nil {
			t.Errorf("Canonical(%q) accepted", bad)
		}
	}
}

// TestUnpackStaysInside feeds archives that try to write outside the
// target through "..", an absolute path and a symlinked directory.
func TestUnpackStaysInside(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	os.Mkdir(outside, 0o755)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := func(h *tar.Header, body string) {
		h.Size = int64(len(body))
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		tw.WriteHeader(h)
		io.WriteString(tw, body)
	}
	hdr(&tar.Header{Name: "../../outside/dotdot", Typeflag: tar.TypeReg}, "x")
	hdr(&tar.Header{Name: "/" + strings.TrimPrefix(outside, "/") + "/abs", Typeflag: tar.TypeReg}, "x")
	hdr(&tar.Header{Name: "link", Typeflag: tar.TypeSymlink, Linkname: outside}, "")
	hdr(&tar.Header{Name: "link/through", Typeflag: tar.TypeReg}, "x")
	hdr(&tar.Header{Name: "hard", Typeflag: tar.TypeLink, Linkname: "../../outside/target"}, "")
	tw.Close()
	os.WriteFile(filepath.Join(outside, "target"), []byte("secret"), 0o600)
	dir := filepath.Join(base, "dir")
	err := Unpack(&buf, dir)
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("outside now holds %v (unpack error %v)", names, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "outside", "dotdot")); err != nil {
		t.Errorf("the .. entry did not land inside: %v", err)
	}
}

// writeTar archives dir's contents (tarDir's own format) into path.
func writeTar(t *testing.T, path, dir string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rc := tarDir(dir)
	defer rc.Close()
	if _, err := io.Copy(f, rc); err != nil {
		t.Fatal(err)
	}
}

func TestGetByID(t *testing.T) {
	s := mustStore(t)
	ctx := context.Background()
	a, err := s.Import(ctx, "a:1", imagetest.MustLayout(t, "1", imagetest.MustImage(t, "1", nil)))
	if err != nil {
		t.Fatal(err)
	}
	hex := strings.TrimPrefix(a.ID, "sha256:")
	for _, ref := range []string{a.ID, hex[:12], "sha256:" + hex[:16]} {
		if im, err := s.Get(ref); err != nil || im.ID != a.ID {
			t.Errorf("Get(%s) = %+v, %v", ref, im, err)
		}
	}
	if _, err := s.Get(hex[:8]); !errors.Is(err, ErrNotFound) {
		t.Errorf("an 8-character prefix: %v, want not found (too short to trust)", err)
	}
}

// An unpack with a limit stops before the entry that would pass it, data
// and entries counted: twenty empty files take twenty inodes.
func TestUnpackLimit(t *testing.T) {
	archive := func(files int, size int) *bytes.Buffer {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for i := 0; i < files; i++ {
			tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("f%d", i), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(size)})
			tw.Write(bytes.Repeat([]byte("x"), size))
		}
		tw.Close()
		return &buf
	}
	for _, c := range []struct {
		name         string
		files, size  int
		limit        int64
		tooBig       bool
		wantUnpacked int
	}{
		{"no limit", 20, 0, 0, false, 20},
		{"under", 20, 0, 20 * entryCost, false, 20},
		{"empty files over", 20, 0, 10 * entryCost, true, 10},
		{"one big file over", 1, 1 << 20, 1 << 20, true, 0},
	} {
		dir := filepath.Join(t.TempDir(), "rootfs")
		err := unpack(archive(c.files, c.size), dir, c.limit)
		if errors.Is(err, ErrTooBig) != c.tooBig {
			t.Errorf("%s: %v, want too big %v", c.name, err, c.tooBig)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != c.wantUnpacked {
			t.Errorf("%s: %d files unpacked, want %d", c.name, len(ents), c.wantUnpacked)
		}
	}
}

// An archive that replaces a directory with a symlink out of the tree
// does not get the directory's time set on the link's target (a host
// directory, when root unpacks an image a user named).
func TestUnpackKeepsTimesInside(t *testing.T) {
	outside := t.TempDir()
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "d/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: old})
	tw.WriteHeader(&tar.Header{Name: "d", Typeflag: tar.TypeSymlink, Linkname: outside})
	tw.Close()
	before, _ := os.Stat(outside)
	if err := Unpack(&buf, filepath.Join(t.TempDir(), "rootfs")); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(outside); !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the link's target outside got mtime %v (was %v)", after.ModTime(), before.ModTime())
	}
}
