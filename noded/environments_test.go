package noded

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/images/imagetest"
	"github.com/corral-hpc/corral/noded/shim"
	"golang.org/x/sys/unix"
)

// call runs a node-plane handler directly (the signature check is
// tested elsewhere) and decodes its answer into out.
func call(t *testing.T, h http.HandlerFunc, method string, in, out any) int {
	t.Helper()
	var body bytes.Buffer
	if in != nil {
		json.NewEncoder(&body).Encode(in)
	}
	rec := httptest.NewRecorder()
	h(rec, httptest.NewRequest(method, "/", &body))
	if out != nil && rec.Code == http.StatusOK {
		if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
			t.Fatal(err)
		}
	}
	if rec.Code != http.StatusOK {
		var e api.Error
		json.Unmarshal(rec.Body.Bytes(), &e)
		t.Logf("%d: %s", rec.Code, e.Error)
	}
	return rec.Code
}

func TestImageOpsAndLaunchResolution(t *testing.T) {
	containertest.MustRoot(t)
	reg := imagetest.MustRegistry(t)
	ref := reg + "/tf:2.2"
	imagetest.MustPush(t, ref, imagetest.MustImage(t, "2.2", nil))
	d := &Daemon{cfg: Config{Name: "n1", ImageStore: filepath.Join(containertest.MustStateDir(t), "images")}}

	var im api.Image
	if code := call(t, d.handleImageOp, "POST", api.ImageRequest{Op: api.ImagePull, Ref: ref}, &im); code != 200 || im.Ref != ref {
		t.Fatalf("pull: %d %+v", code, im)
	}
	var list []api.Image
	if code := call(t, d.handleImages, "GET", nil, &list); code != 200 || len(list) != 1 || list[0].ID != im.ID {
		t.Fatalf("list: %d %+v", code, list)
	}
	sj := &shim.Job{}
	if err := d.prepareEnvironment(&api.LaunchRequest{JobID: 1, Image: ref}, sj); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(sj.ImageRootfs, "VERSION")); err != nil || string(b) != "2.2\n" {
		t.Errorf("launch resolved %s to a tree with /VERSION %q, %v", ref, b, err)
	}
	if sj := (&shim.Job{}); d.prepareEnvironment(&api.LaunchRequest{JobID: 2, Image: reg + "/tf:9"}, sj) != nil || sj.ImageRootfs != "" || sj.ImageStore != d.cfg.ImageStore {
		t.Errorf("a missing image is not left to the shim to pull: %+v", sj)
	}
	if err := d.prepareEnvironment(&api.LaunchRequest{JobID: 3, Mounts: []api.Mount{{Source: "/data", Target: "/data"}}}, &shim.Job{}); err == nil {
		t.Error("a mount was accepted by a node with no --mount-root")
	}
	for _, c := range []struct {
		req  api.ImageRequest
		code int
	}{
		{api.ImageRequest{Op: "frobnicate", Ref: ref}, 400},
		{api.ImageRequest{Op: api.ImageImport, Ref: "x:1", Source: "relative/path"}, 400},
		{api.ImageRequest{Op: api.ImageRemove, Ref: "never:1"}, 404},
		{api.ImageRequest{Op: api.ImageRemove, Ref: ref}, 200},
		{api.ImageRequest{Op: api.ImageRemove, Ref: ref}, 404},
	} {
		if code := call(t, d.handleImageOp, "POST", c.req, nil); code != c.code {
			t.Errorf("%+v: %d, want %d", c.req, code, c.code)
		}
	}
}

func TestReadOutput(t *testing.T) {
	containertest.MustRoot(t)
	work := containertest.MustUserDir(t, containertest.Nobody, containertest.Nobody)
	l := api.LaunchRequest{JobID: 7, Name: "j", User: "nobody", UID: containertest.Nobody, GID: containertest.Nobody,
		WorkDir: work, Output: "out-%j.txt", Error: "err-%j.txt"}
	out := filepath.Join(work, "out-7.txt")
	os.WriteFile(out, []byte("line1\nline2\n"), 0o644)
	os.Chown(out, containertest.Nobody, containertest.Nobody)
	for _, c := range []struct {
		offset, limit int64
		want          string
		next          int64
	}{{0, 0, "line1\nline2\n", 12}, {6, 0, "line2\n", 12}, {0, 3, "lin", 3}, {12, 0, "", 12}} {
		ch, _, err := readOutput(&api.OutputRequest{Launch: l, Offset: c.offset, Limit: c.limit}, "n1")
		if err != nil || string(ch.Data) != c.want || ch.Next != c.next || ch.Size != 12 {
			t.Errorf("offset %d limit %d: %+v, %v", c.offset, c.limit, ch, err)
		}
	}
	// stderr: missing, then a link to a root-only file, then root-only.
	if _, code, err := readOutput(&api.OutputRequest{Launch: l, Stderr: true}, "n1"); code != 404 {
		t.Errorf("missing stderr: %d %v", code, err)
	}
	secret := filepath.Join(containertest.MustStateDir(t), "secret")
	os.WriteFile(secret, []byte("s"), 0o600)
	os.Symlink(secret, filepath.Join(work, "err-7.txt"))
	if _, code, err := readOutput(&api.OutputRequest{Launch: l, Stderr: true}, "n1"); code != 403 {
		t.Errorf("symlinked stderr: %d %v", code, err)
	}
	os.Remove(filepath.Join(work, "err-7.txt"))
	os.WriteFile(filepath.Join(work, "err-7.txt"), []byte("root's"), 0o600)
	if ch, code, err := readOutput(&api.OutputRequest{Launch: l, Stderr: true}, "n1"); code != 403 {
		t.Errorf("root-only stderr read as nobody: %d %+v %v", code, ch, err)
	}
}

// The output fetch follows the same links as the job did (shim's stdio
// rules): the user's own link is read through, one another user planted
// is refused even where its target is readable, and a FIFO is refused
// without waiting for a writer.
func TestReadOutputLinks(t *testing.T) {
	containertest.MustRoot(t)
	work := containertest.MustUserDir(t, containertest.Nobody, containertest.Nobody)
	l := api.LaunchRequest{JobID: 7, Name: "j", User: "nobody", UID: containertest.Nobody, GID: containertest.Nobody,
		WorkDir: work, Output: "out-%j.txt"}
	out, target := filepath.Join(work, "out-7.txt"), filepath.Join(work, "real.txt")
	os.WriteFile(target, []byte("mine\n"), 0o644)
	os.Chown(target, containertest.Nobody, containertest.Nobody)
	read := func() (string, int, error) {
		t.Helper()
		ch, code, err := readOutput(&api.OutputRequest{Launch: l}, "n1")
		if ch == nil {
			return "", code, err
		}
		return string(ch.Data), code, err
	}
	for _, c := range []struct {
		name  string
		make  func() error
		owner int
		code  int
		want  string
	}{
		{"the user's own link", func() error { return os.Symlink("real.txt", out) }, containertest.Nobody, 200, "mine\n"},
		{"root's link", func() error { return os.Symlink(target, out) }, 0, 200, "mine\n"},
		{"another user's link", func() error { return os.Symlink(target, out) }, 12345, 403, ""},
		{"a FIFO", func() error { return unix.Mkfifo(out, 0o666) }, containertest.Nobody, 403, ""},
	} {
		os.Remove(out)
		if err := c.make(); err != nil {
			t.Fatal(err)
		}
		os.Lchown(out, c.owner, c.owner)
		done := make(chan struct{})
		var got string
		var code int
		var err error
		go func() { got, code, err = read(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the fetch is blocked", c.name)
		}
		if code != c.code || got != c.want {
			t.Errorf("%s: %d %q %v, want %d %q", c.name, code, got, err, c.code, c.want)
		}
	}
}
