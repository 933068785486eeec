package containertest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/container"
)

// Nobody is the unprivileged uid/gid jobs run as in tests.
const Nobody = 65534

// DispatchInit is for TestMain: it makes the test binary act as the
// container init when libcontainer re-executes it, and keeps the main
// thread out of libcontainer's setns goroutines (container.KeepMainThread).
func DispatchInit() {
	container.InitIfRequested()
	container.KeepMainThread()
}

// MustRoot skips the test unless it runs as root.
func MustRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates containers, cgroups and mounts")
	}
}

// BuildInit builds corral-init (static, CGO_ENABLED=0) into a fresh
// directory. Call it from TestMain and run cleanup after m.Run.
func BuildInit() (path string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "corral-init-build-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	// The directory must be traversable by job users: they execute the
	// binary through a bind mount, but runc stats it as root first.
	if err := os.Chmod(dir, 0o755); err != nil {
		cleanup()
		return "", nil, err
	}
	path = filepath.Join(dir, "corral-init")
	if err := Build(path, "github.com/corral-hpc/corral/cmd/corral-init", false); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("building corral-init: %v", err)
	}
	return path, cleanup, nil
}

// PrebuiltEnv names a directory of binaries built elsewhere, for a test
// host without Go (scripts/check-cgroup-v2.sh on a v2 machine): Build
// copies <dir>/<base name of out> from there instead of building.
const PrebuiltEnv = "CORRAL_TEST_BINS"

// Build builds the main package pkg into out with the toolchain that
// built this test (cgo as asked), or copies it from $CORRAL_TEST_BINS.
func Build(out, pkg string, cgo bool) error {
	if dir := os.Getenv(PrebuiltEnv); dir != "" {
		b, err := os.ReadFile(filepath.Join(dir, filepath.Base(out)))
		if err != nil {
			return fmt.Errorf("%s is set but: %v", PrebuiltEnv, err)
		}
		return os.WriteFile(out, b, 0o755)
	}
	cmd := exec.Command(goTool(), "build", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if cgo {
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

func goTool() string {
	//lint:ignore SA1019 the toolchain that built this test, found even where go is not on PATH (root's, under sudo)
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// MustUserDir returns a new directory owned by uid:gid, mode 0755, whose
// parents are traversable by everyone.
func MustUserDir(t testing.TB, uid, gid int) string {
	t.Helper()
	base := t.TempDir()
	// The test's temporary root is 0700; the user must pass through it.
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(base, "u")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	return dir
}

// MustOutputFile creates path owned by uid, for a container's stdout:
// container.Start refuses stdio the job's user does not own (runc would
// chown it).
func MustOutputFile(t testing.TB, path string, uid int) *os.File {
	t.Helper()
	f, err := os.Create(path)
	if err == nil {
		err = f.Chown(uid, -1)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// MustStateDir returns a root-only directory with no symlinks in its path.
func MustStateDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Leaks lists what a finished job left behind: cgroup directories (any of
// the given ones), mounts at or below any of the given paths, and
// processes whose cgroup or command line mentions marker.
func Leaks(cgroupDirs map[string]string, paths []string, marker string) []string {
	var out []string
	for c, d := range cgroupDirs {
		if fileExists(d) {
			out = append(out, fmt.Sprintf("cgroup %q: %s", c, d))
		}
	}
	if f, unlock, err := container.OpenMountinfo(); err == nil {
		defer unlock()
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) < 5 {
				continue
			}
			for _, p := range paths {
				if f[4] == p || strings.HasPrefix(f[4], p+"/") {
					out = append(out, "mount: "+f[4])
				}
			}
		}
	}
	if marker != "" {
		procs, _ := os.ReadDir("/proc")
		for _, p := range procs {
			pid, err := strconv.Atoi(p.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			cg, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "cgroup"))
			cmd, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
			if strings.Contains(string(cg), marker) || strings.Contains(string(cmd), marker) {
				out = append(out, fmt.Sprintf("process %d: %q", pid, strings.ReplaceAll(string(cmd), "\x00", " ")))
			}
		}
	}
	return out
}

// Eventually polls cond every 10ms until it holds or limit passes. It is
// for waiting on asynchronous effects, never for asserting speed: the
// limits are generous.
func Eventually(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}
