// Package imagetest builds small real images for tests: busybox-static
// from the host plus a /VERSION file, and serves them from
// go-containerregistry's in-process registry on loopback.
package imagetest

import (
	"archive/tar"
	"bytes"
	"io"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Busybox is the static busybox the images are built from.
const Busybox = "/bin/busybox"

// Applets get a symlink in /bin.
var Applets = []string{"sh", "cat", "echo", "id", "ls", "sleep", "touch", "head", "tr", "wc", "readlink", "mkdir", "test", "true", "false"}

// MustBusybox skips the test when busybox-static is missing.
func MustBusybox(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(Busybox); err != nil {
		t.Skip("needs busybox-static at /bin/busybox (scripts/install-deps.sh)")
	}
}

// Files is the file content of a test image by path (no leading /).
func Files(version string) map[string]string {
	return map[string]string{"VERSION": version + "\n"}
}

// MustImage builds a one-layer image: /bin/busybox, its applet links,
// /VERSION holding version, and extra files.
func MustImage(t testing.TB, version string, extra map[string]string) v1.Image {
	t.Helper()
	MustBusybox(t)
	bb, err := os.ReadFile(Busybox)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(h *tar.Header, body []byte) {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"bin/", "etc/", "tmp/"} {
		add(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755}, nil)
	}
	add(&tar.Header{Name: "bin/busybox", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(bb))}, bb)
	for _, a := range Applets {
		add(&tar.Header{Name: "bin/" + a, Typeflag: tar.TypeSymlink, Linkname: "busybox", Mode: 0o777}, nil)
	}
	files := Files(version)
	for k, v := range extra {
		files[k] = v
	}
	for p, body := range files {
		if i := strings.LastIndex(p, "/"); i > 0 {
			add(&tar.Header{Name: p[:i+1], Typeflag: tar.TypeDir, Mode: 0o755}, nil)
		}
		add(&tar.Header{Name: p, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}, []byte(body))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.Env = []string{"PATH=/bin", "IMAGE_VERSION=" + version}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// MustRegistry starts an in-process registry on loopback and returns its
// host:port; it stops with the test.
func MustRegistry(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(nopLogger())))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// MustPush pushes img as ref (host:port/name:tag).
func MustPush(t testing.TB, ref string, img v1.Image) {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
}

// MustLayout writes an OCI image layout holding img, tagged tag, in a new
// directory and returns it (for Store.Import).
func MustLayout(t testing.TB, tag string, img v1.Image) string {
	t.Helper()
	dir := t.TempDir() + "/layout"
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := lp.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": tag})); err != nil {
		t.Fatal(err)
	}
	return dir
}
