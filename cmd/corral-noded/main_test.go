package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/noded"
	"github.com/corral-hpc/corral/noded/nodedtest"
	"github.com/corral-hpc/corral/noded/shim"
)

// mustBuild builds corral-noded and corral-shim (cgo) and corral-init
// (static) into one directory, as `make` lays them out.
func mustBuild(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	for _, b := range []struct {
		pkg, out string
		cgo      bool
	}{
		{"github.com/corral-hpc/corral/cmd/corral-noded", "corral-noded", true},
		{"github.com/corral-hpc/corral/cmd/corral-shim", "corral-shim", true},
		{"github.com/corral-hpc/corral/cmd/corral-init", "corral-init", false},
	} {
		if err := containertest.Build(filepath.Join(dir, b.out), b.pkg, b.cgo); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type daemonProc struct {
	cmd   *exec.Cmd
	out   *bytes.Buffer
	state string
}

// v2Domain is, on a pure cgroup v2 host, the cgroup this test moved out of
// (see TestMain); each noded starts in a child of it, since on v2 a noded
// needs a cgroup of its own.
var v2Domain string

func TestMain(m *testing.M) {
	if os.Geteuid() == 0 {
		if h, err := cgroup.Detect(); err == nil && h.Mode == cgroup.ModeV2 {
			if err := h.Prepare("corral-e2e-test"); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			v2Domain = h.Domain
		}
	}
	os.Exit(m.Run())
}

// ownCgroup returns, on v2, a fresh cgroup for one noded (and removes it
// and noded's leaf at the end); "" elsewhere.
func ownCgroup(t *testing.T, name string) string {
	t.Helper()
	if v2Domain == "" {
		return ""
	}
	dir := filepath.Join(v2Domain, "noded-"+name)
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		leaves, _ := filepath.Glob(filepath.Join(dir, cgroup.LeafName("*")))
		for _, l := range leaves {
			os.Remove(l)
		}
		os.Remove(dir)
	})
	return dir
}

func startNoded(t *testing.T, bin, name, ctldURL, keyFile, state string, extra ...string) *daemonProc {
	t.Helper()
	args := append([]string{"--name", name, "--ctld", ctldURL, "--listen", "127.0.0.1:0", "--key", keyFile,
		"--state", state, "--cpus", "3", "--mem", "1G", "--kill-wait", "300ms"}, extra...)
	cmd := exec.Command(filepath.Join(bin, "corral-noded"), args...)
	if cg := ownCgroup(t, name); cg != "" {
		// A restarted noded finds its cgroup holding its jobs and
		// enabling their controllers, so only its leaf takes a process.
		if leaves, _ := filepath.Glob(filepath.Join(cg, cgroup.LeafName("*"))); len(leaves) == 1 {
			cg = leaves[0]
		}
		// Enter the cgroup, then become corral-noded (same PID).
		cmd = exec.Command("/bin/sh", append([]string{"-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, cg, cmd.Path}, args...)...)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &daemonProc{cmd: cmd, out: &out, state: state}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("%s log:\n%s", name, out.String())
		}
	})
	return p
}

func (p *daemonProc) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("corral-noded exited with %v after SIGTERM\n%s", err, p.out)
	}
}

// TestTwoNodesSideBySide runs two corral-noded binaries on this host with
// different names, state directories and ports against one fake ctld,
// runs a job on each, and checks that a job survives its noded: the noded
// is stopped while the job runs, the job is cancelled through its shim,
// and the restarted noded reports the end.
func TestTwoNodesSideBySide(t *testing.T) {
	containertest.MustRoot(t)
	bin := mustBuild(t)
	key := []byte("0123456789abcdef0123456789abcdef")
	keyFile := filepath.Join(t.TempDir(), "cluster.key")
	if err := os.WriteFile(keyFile, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctld := nodedtest.NewFakeCtld(t, key)
	suffix := strconv.Itoa(os.Getpid())
	names := []string{"a" + suffix, "b" + suffix}
	procs := map[string]*daemonProc{}
	for _, n := range names {
		procs[n] = startNoded(t, bin, n, ctld.URL(), keyFile, containertest.MustStateDir(t))
	}
	addr := map[string]string{}
	ctld.WaitFor("both nodes to register", func(f *nodedtest.FakeCtld) bool {
		for _, r := range f.Registers {
			addr[r.Name] = r.Addr
		}
		return addr[names[0]] != "" && addr[names[1]] != ""
	})
	if addr[names[0]] == addr[names[1]] || strings.HasSuffix(addr[names[0]], ":0") {
		t.Fatalf("advertised addresses %v", addr)
	}
	work := containertest.MustUserDir(t, containertest.Nobody, containertest.Nobody)
	client := func(n string) *api.NodeClient { return api.NewNodeClient("http://"+addr[n], key, 10*time.Second) }
	launch := func(n string, id uint64, script string, cpus int) {
		t.Helper()
		req := api.LaunchRequest{JobID: id, Name: "e2e", Partition: "p", User: "nobody", UID: containertest.Nobody,
			GID: containertest.Nobody, Home: work, Script: script, WorkDir: work, CPUs: cpus, MemBytes: 64 << 20,
			NodeList: []string{n}, Output: "%N-%j.out"}
		if err := client(n).Do(context.Background(), http.MethodPost, "/v1/launch", req, nil); err != nil {
			t.Fatalf("launch on %s: %v", n, err)
		}
	}
	// Job 1 on each node at once, 3 CPUs (oversubscribing 2 cores).
	for _, n := range names {
		launch(n, 1, "echo \"$SLURM_JOB_NODELIST $SLURM_CPUS_ON_NODE\"\n", 3)
	}
	ctld.WaitFor("both ends", func(f *nodedtest.FakeCtld) bool {
		got := map[string]api.JobState{}
		for _, e := range f.Events {
			if e.Kind == api.EventEnded {
				got[e.Node] = e.State
			}
		}
		return got[names[0]] == api.StateCompleted && got[names[1]] == api.StateCompleted
	})
	for _, n := range names {
		if b, _ := os.ReadFile(filepath.Join(work, n+"-1.out")); string(b) != n+" 3\n" {
			t.Errorf("%s: output %q, want the node name and 3 CPUs", n, b)
		}
	}

	// A job outlives its noded.
	a := names[0]
	launch(a, 2, "sleep 100\n", 1)
	ctld.Started(2)
	procs[a].stop(t)
	jobDir := filepath.Join(procs[a].state, "jobs", "2")
	pid, _, err := shim.ReadPidFile(filepath.Join(jobDir, shim.PidFile))
	if err != nil {
		ctld.Lock()
		t.Logf("events: %+v", ctld.Events)
		ctld.Unlock()
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the shim died with its noded: %v", err)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil { // cancel through the shim
		t.Fatal(err)
	}
	if !containertest.Eventually(20*time.Second, func() bool { _, err := shim.ReadResult(jobDir); return err == nil }) {
		t.Fatal("the shim wrote no result")
	}
	startNoded(t, bin, a, ctld.URL(), keyFile, procs[a].state)
	if ev := ctld.Ended(2); ev.State != api.StateCancelled || ev.Node != a {
		t.Errorf("end reported after the restart: %+v", ev)
	}
	if !containertest.Eventually(10*time.Second, func() bool { _, err := os.Stat(jobDir); return os.IsNotExist(err) }) {
		t.Error("the job directory survived the restart's recovery")
	}
	if leaks := containertest.Leaks(nil, []string{work}, "corral-"+noded.CgroupScope(a, procs[a].state)+"-job"); len(leaks) > 0 {
		t.Errorf("left behind: %v", leaks)
	}
}
