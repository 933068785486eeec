package shim_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/images"
	"github.com/corral-hpc/corral/images/imagetest"
	"github.com/corral-hpc/corral/noded/shim"
)

var nobody = shim.Identity{UID: containertest.Nobody, GID: containertest.Nobody}

// mustDataRoot makes an allowed mount root holding: mine/ (nobody's),
// private/ (root's, 0700), public/ (root's, 0755), and links that point
// out of the root and back into it.
func mustDataRoot(t *testing.T) string {
	t.Helper()
	containertest.MustRoot(t)
	root := containertest.MustStateDir(t)
	os.Chmod(root, 0o755)
	for _, d := range []struct {
		name string
		mode os.FileMode
		uid  int
	}{{"mine", 0o700, containertest.Nobody}, {"private", 0o700, 0}, {"public", 0o755, 0}} {
		p := filepath.Join(root, d.name)
		if err := os.Mkdir(p, d.mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, d.mode)
		os.Chown(p, d.uid, d.uid)
	}
	os.Symlink("/etc", filepath.Join(root, "mine", "escape"))
	os.Symlink("../public", filepath.Join(root, "mine", "inside"))
	return root
}

func TestMountChecks(t *testing.T) {
	root := mustDataRoot(t)
	roots := []string{"/nonexistent-root", root}
	tests := []struct {
		name    string
		m       api.Mount
		wantSrc string // the bind's source when accepted
		wantErr string
	}{
		{"own directory, writable", api.Mount{Source: root + "/mine", Target: "/data"}, root + "/mine", ""},
		{"public, read-only", api.Mount{Source: root + "/public", Target: "/ref", ReadOnly: true}, root + "/public", ""},
		{"public, writable", api.Mount{Source: root + "/public", Target: "/ref"}, "", "may not write"},
		{"another user's directory", api.Mount{Source: root + "/private", Target: "/p", ReadOnly: true}, "", "may not read"},
		{"symlink out of the root", api.Mount{Source: root + "/mine/escape", Target: "/e", ReadOnly: true}, "", "leads out of"},
		{"symlink inside the root", api.Mount{Source: root + "/mine/inside", Target: "/i", ReadOnly: true}, root + "/public", ""},
		{"dot-dot", api.Mount{Source: root + "/mine/../private", Target: "/d", ReadOnly: true}, "", "'..'"},
		{"outside every root", api.Mount{Source: "/etc", Target: "/etc2", ReadOnly: true}, "", "not under an allowed root"},
		{"missing", api.Mount{Source: root + "/nope", Target: "/n", ReadOnly: true}, "", "no such file"},
		{"over /proc", api.Mount{Source: root + "/mine", Target: "/proc/x"}, "", "reserved"},
		{"over corral-init", api.Mount{Source: root + "/mine", Target: "/.corral"}, "", "reserved"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bs, err := shim.MountBinds(nobody, roots, []api.Mount{tc.m})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(bs) != 1 || bs[0].Source != tc.wantSrc || bs[0].Dest != tc.m.Target || bs[0].Writable == tc.m.ReadOnly {
				t.Errorf("binds %+v", bs)
			}
		})
	}
	// Root may mount what nobody may not; no roots means no mounts.
	if _, err := shim.MountBinds(shim.Identity{}, roots, []api.Mount{{Source: root + "/private", Target: "/p"}}); err != nil {
		t.Errorf("root: %v", err)
	}
	if _, err := shim.MountBinds(nobody, nil, []api.Mount{{Source: root + "/mine", Target: "/d"}}); err == nil {
		t.Error("a mount was accepted with no allowed roots")
	}
}

// mustImageRootfs stores a busybox image whose /VERSION is version and
// returns its unpacked root file system.
func mustImageRootfs(t *testing.T, s *images.Store, version string) (string, []string) {
	t.Helper()
	im, err := s.Import(context.Background(), "framework:"+version, imagetest.MustLayout(t, version, imagetest.MustImage(t, version, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return s.RootfsPath(im.ID), im.Env
}

// TestImageJobs runs two jobs in two versions of one image name (seed
// 003): each prints its own /VERSION and its own memory limit, and a file
// written into a mounted folder outlives the job (seed 002).
func TestImageJobs(t *testing.T) {
	containertest.MustRoot(t)
	imagetest.MustBusybox(t)
	store, err := images.Open(containertest.MustStateDir(t))
	if err != nil {
		t.Fatal(err)
	}
	data := mustDataRoot(t)
	script := `cat /VERSION
cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max
echo "$IMAGE_VERSION"
test -e /etc/debian_version && echo host || echo image
echo written-by-$IMAGE_VERSION > /data/result
`
	for _, c := range []struct {
		version string
		mem     int64
	}{{"1.13", 128 << 20}, {"2.2", 192 << 20}} {
		rootfs, env := mustImageRootfs(t, store, c.version)
		tj := mustJob(t, script, func(j *shim.Job) {
			j.ImageRootfs, j.ImageEnv, j.MountRoots = rootfs, env, []string{data}
			j.Launch.MemBytes = c.mem
			j.Launch.Mounts = []api.Mount{{Source: data + "/mine", Target: "/data"}}
		})
		r := tj.run(t, shim.Controls{})
		if r.State != api.StateCompleted {
			t.Fatalf("%s: %+v\n%s", c.version, r, tj.output(t))
		}
		want := strings.Join([]string{c.version, itoa(c.mem), c.version, "image"}, "\n") + "\n"
		if got := tj.output(t); got != want {
			t.Errorf("%s: output %q, want %q", c.version, got, want)
		}
		if b, err := os.ReadFile(filepath.Join(data, "mine", "result")); err != nil || string(b) != "written-by-"+c.version+"\n" {
			t.Errorf("%s: mounted file %q, %v", c.version, b, err)
		}
		if _, err := os.Stat(filepath.Join(tj.dir, shim.LayerDir)); !os.IsNotExist(err) {
			t.Errorf("%s: the job's writable layer is left", c.version)
		}
	}
}

// TestRefusedMountFailsJob: a job whose mount is refused fails with the
// reason and never runs.
func TestRefusedMountFailsJob(t *testing.T) {
	data := mustDataRoot(t)
	tj := mustJob(t, "echo ran > \"$HOME/ran\"\n", func(j *shim.Job) {
		j.MountRoots = []string{data}
		j.Launch.Mounts = []api.Mount{{Source: data + "/private", Target: "/p", ReadOnly: true}}
	})
	r := tj.run(t, shim.Controls{})
	if r.State != api.StateFailed || !strings.Contains(r.Message, "may not read") || !r.Start.IsZero() {
		t.Errorf("result %+v", r)
	}
	if _, err := os.Stat(filepath.Join(tj.work, "ran")); !os.IsNotExist(err) {
		t.Error("the job ran")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestImagePulledOnDemand: a job whose image the node lacks pulls it from
// the registry first, and says so on its stderr.
func TestImagePulledOnDemand(t *testing.T) {
	containertest.MustRoot(t)
	reg := imagetest.MustRegistry(t)
	ref := reg + "/pytorch:1.5"
	imagetest.MustPush(t, ref, imagetest.MustImage(t, "1.5", nil))
	storeDir := containertest.MustStateDir(t)
	tj := mustJob(t, "cat /VERSION\n", func(j *shim.Job) {
		j.Launch.Image, j.ImageStore = ref, storeDir
	})
	r := tj.run(t, shim.Controls{})
	out := tj.output(t)
	if r.State != api.StateCompleted || !strings.Contains(out, "corral: pulled "+ref) || !strings.HasSuffix(out, "\n1.5\n") {
		t.Fatalf("result %+v, output %q", r, out)
	}
	st, _ := images.Open(storeDir)
	if _, err := st.Get(ref); err != nil {
		t.Errorf("the pulled image is not in the store: %v", err)
	}
	// An image no registry has fails the job, saying why.
	tj = mustJob(t, "true\n", func(j *shim.Job) { j.Launch.Image, j.ImageStore = reg+"/nope:1", storeDir })
	if r := tj.run(t, shim.Controls{}); r.State != api.StateFailed || !strings.Contains(r.Message, "pulling it failed") {
		t.Errorf("missing image: %+v", r)
	}
	// An image bigger than the node lets a job pull fails the job, saying
	// so, and leaves nothing of it in the store.
	big := reg + "/big:1"
	imagetest.MustPush(t, big, imagetest.MustImage(t, "big", map[string]string{"data": strings.Repeat("x", 2<<20)}))
	tj = mustJob(t, "true\n", func(j *shim.Job) {
		j.Launch.Image, j.ImageStore, j.ImagePullMax = big, storeDir, 1<<20
	})
	if r := tj.run(t, shim.Controls{}); r.State != api.StateFailed || !strings.Contains(r.Message, "too big for a job to pull") {
		t.Errorf("an image over --image-pull-max: %+v", r)
	}
	if _, err := st.Get(big); !errors.Is(err, images.ErrNotFound) {
		t.Errorf("the refused image is in the store: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(storeDir, "tmp")); len(ents) != 0 {
		t.Errorf("the refused pull left %d entries in the store's tmp", len(ents))
	}
}
