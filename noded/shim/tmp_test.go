package shim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/images"
	"github.com/corral-hpc/corral/images/imagetest"
	"github.com/corral-hpc/corral/noded/shim"
)

// TestTmpIsBoundedByMemory: the job's /tmp is a tmpfs no larger than its
// memory limit, charged to its memory cgroup. A 64M job cannot write
// 200M there (ENOSPC or the OOM killer, never the node's disk); a 256M
// job's 100M file shows in its peak memory; small files work as before.
func TestTmpIsBoundedByMemory(t *testing.T) {
	const script = `stat -f -c %T /tmp
stat -c %a /tmp
df -k /tmp | awk 'NR==2 {print $2}'
echo small > /tmp/s && cat /tmp/s
head -c $BIG /dev/zero > /tmp/big; echo "big exit $?"
`
	small := mustJob(t, script, func(j *shim.Job) {
		j.Launch.MemBytes = 64 << 20
		j.Launch.Env = append(j.Launch.Env, "BIG=200M")
	})
	r := small.run(t, shim.Controls{})
	lines := strings.Split(strings.TrimSpace(small.output(t)), "\n")
	if len(lines) < 4 || lines[0] != "tmpfs" || lines[1] != "1777" || lines[2] != "65536" || lines[3] != "small" {
		t.Fatalf("a 64M job's /tmp: got %q, want a 1777 tmpfs of 65536k that takes a small file\n%+v", lines, r)
	}
	// The OOM killer may end the whole job (the tmpfs pages stay charged
	// after the writer dies), or the write may meet ENOSPC first.
	if r.State != api.StateOutOfMemory && (len(lines) < 5 || lines[4] == "big exit 0") {
		t.Errorf("a 64M job wrote 200M to /tmp: %q, %+v", lines, r)
	}

	big := mustJob(t, script, func(j *shim.Job) { j.Launch.Env = append(j.Launch.Env, "BIG=100M") })
	r = big.run(t, shim.Controls{})
	out := big.output(t)
	if r.State != api.StateCompleted || !strings.Contains(out, "big exit 0") {
		t.Fatalf("a 256M job writing 100M to /tmp: %+v\n%s", r, out)
	}
	if r.PeakMemBytes < 100<<20 {
		t.Errorf("peak memory %d after writing 100M to /tmp: the tmpfs is not charged to the job", r.PeakMemBytes)
	}
}

// TestImageLayerIsBoundedByMemory: an image job's writes over the image
// go to a tmpfs no larger than its memory limit, charged to its memory
// cgroup, as its /tmp does: a 64M root job cannot write 200M to / (ENOSPC or
// the OOM killer), and the file system under / is 64M big, not the node's
// disk; a 256M job's 100M file shows in its peak memory.
func TestImageLayerIsBoundedByMemory(t *testing.T) {
	containertest.MustRoot(t)
	imagetest.MustBusybox(t)
	store, err := images.Open(containertest.MustStateDir(t))
	if err != nil {
		t.Fatal(err)
	}
	rootfs, env := mustImageRootfs(t, store, "9.9")
	const script = `df -k / | awk 'NR==2 {print $2}'
echo small > /s && cat /s
dd if=/dev/zero of=/big bs=1M count=$BIG 2>/dev/null; echo "big exit $?"
`
	image := func(mem int64, big string) func(*shim.Job) {
		return func(j *shim.Job) {
			j.ImageRootfs, j.ImageEnv = rootfs, env
			// Root, who may write anywhere in the image.
			j.Launch.User, j.Launch.UID, j.Launch.GID, j.Launch.Groups = "root", 0, 0, nil
			j.Launch.MemBytes = mem
			j.Launch.Env = append(j.Launch.Env, "BIG="+big)
		}
	}
	small := mustJob(t, script, image(64<<20, "200"))
	r := small.run(t, shim.Controls{})
	lines := strings.Split(strings.TrimSpace(small.output(t)), "\n")
	if len(lines) < 2 || lines[0] != "65536" || lines[1] != "small" {
		t.Fatalf("a 64M image job's /: got %q, want 65536k that takes a small file\n%+v", lines, r)
	}
	if r.State != api.StateOutOfMemory && (len(lines) < 3 || lines[2] == "big exit 0") {
		t.Errorf("a 64M image job wrote 200M to /: %q, %+v", lines, r)
	}

	big := mustJob(t, script, image(256<<20, "100"))
	r = big.run(t, shim.Controls{})
	out := big.output(t)
	if r.State != api.StateCompleted || !strings.Contains(out, "big exit 0") {
		t.Fatalf("a 256M image job writing 100M to /: %+v\n%s", r, out)
	}
	if r.PeakMemBytes < 100<<20 {
		t.Errorf("peak memory %d after writing 100M to /: the layer is not charged to the job", r.PeakMemBytes)
	}
	if _, err := os.Stat(filepath.Join(big.dir, shim.LayerDir)); !os.IsNotExist(err) {
		t.Errorf("the job's writable layer is left: %v", err)
	}
}
