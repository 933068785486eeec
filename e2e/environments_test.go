package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/images/imagetest"
)

const nobodyUID = 65534

// mustOpenDir is a directory under /tmp that nobody can reach (t.TempDir's
// parent is private to root).
func mustOpenDir(t *testing.T, prefix string, mode os.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}

// envCluster is a one-node cluster with an image store, an allowed mount
// root and a loopback registry holding fw:1.13 and fw:2.2.
type envCluster struct {
	*Cluster
	reg, data, work string
}

func startEnvCluster(t *testing.T) *envCluster {
	t.Helper()
	needRoot(t)
	imagetest.MustBusybox(t)
	reg := imagetest.MustRegistry(t)
	for _, v := range []string{"1.13", "2.2"} {
		imagetest.MustPush(t, reg+"/fw:"+v, imagetest.MustImage(t, v, nil))
	}
	data := mustOpenDir(t, "corral-data-", 0o755)
	for _, d := range []struct {
		name string
		uid  int
	}{{"alice", nobodyUID}, {"secret", 0}} {
		p := filepath.Join(data, d.name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		os.Chown(p, d.uid, d.uid)
	}
	os.Symlink("/etc", filepath.Join(data, "alice", "escape"))
	store := mustOpenDir(t, "corral-images-", 0o755)
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{{Name: "n1", CPUs: 2, Mem: "2G",
		Args: []string{"--image-store", store, "--mount-root", data}}}})
	return &envCluster{Cluster: c, reg: reg, data: data, work: mustOpenDir(t, "corral-work-", 0o777)}
}

func (c *envCluster) submitAs(args ...string) uint64 {
	c.t.Helper()
	return c.Submit(c.work, append([]string{"--uid", "nobody"}, args...)...)
}

func (c *envCluster) output(id uint64) string {
	c.t.Helper()
	b, err := os.ReadFile(filepath.Join(c.work, fmt.Sprintf("out-%d.txt", id)))
	if err != nil {
		c.t.Fatal(err)
	}
	return string(b)
}

// TestImagesTwoVersions is acceptance item 1: two tags of one image, one
// pulled by `corral image pull`, the other pulled on demand; each job
// sees its own /VERSION and its own memory limit.
func TestImagesTwoVersions(t *testing.T) {
	c := startEnvCluster(t)
	if r := c.Corral("image", "pull", c.reg+"/fw:1.13"); r.Code != 0 || !strings.Contains(r.Stdout, "n1: "+c.reg+"/fw:1.13") {
		t.Fatalf("image pull: %+v", r)
	}
	if r := c.Corral("image", "list"); r.Code != 0 || !strings.Contains(r.Stdout, c.reg+"/fw:1.13") || !strings.Contains(r.Stdout, "n1") {
		t.Fatalf("image list: %+v", r)
	}
	script := "cat /VERSION; cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max; id -u"
	jobs := map[string]uint64{}
	mem := map[string]string{"1.13": "100M", "2.2": "150M"}
	for _, v := range []string{"1.13", "2.2"} {
		jobs[v] = c.submitAs("--image", c.reg+"/fw:"+v, "--mem", mem[v], "-o", "out-%j.txt", "--wrap", script)
	}
	want := map[string]string{"1.13": "1.13\n104857600\n65534\n", "2.2": "2.2\n157286400\n65534\n"}
	for v, id := range jobs {
		j := c.WaitEnded(id, 60*time.Second)
		out := c.output(id)
		if j.State != api.StateCompleted || !strings.HasSuffix(out, want[v]) {
			t.Errorf("fw:%s job %d: %s %q, output %q, want it to end with %q", v, id, j.State, j.Message, out, want[v])
		}
	}
	if out := c.output(jobs["2.2"]); !strings.Contains(out, "corral: pulled "+c.reg+"/fw:2.2") {
		t.Errorf("the on-demand pull is not shown: %q", out)
	}
	// The pull's time is on record as the job's ImagePull interval (queue
	// shows CF meanwhile); the pre-pulled image needs none.
	for v, id := range jobs {
		pulled := false
		for _, h := range c.Job(id).History {
			pulled = pulled || h.Reason == api.ReasonImagePull
		}
		if pulled != (v == "2.2") {
			t.Errorf("fw:%s job %d: ImagePull in history = %v", v, id, pulled)
		}
	}
	if r := c.Corral("image", "rm", c.reg+"/fw:1.13"); r.Code != 0 {
		t.Errorf("image rm: %+v", r)
	}
	if r := c.Corral("image", "list"); strings.Contains(r.Stdout, "/fw:1.13") || !strings.Contains(r.Stdout, "/fw:2.2") {
		t.Errorf("after rm: %s", r.Stdout)
	}
}

// TestMountsAndLogFollow covers acceptance items 2 and 3: a file written
// into a mounted folder survives the cancelled job; `corral log -f` shows
// lines while the job runs; mounts the user may not read, or that escape
// the allowed root, are refused.
func TestMountsAndLogFollow(t *testing.T) {
	c := startEnvCluster(t)
	id := c.submitAs("--mount", c.data+"/alice:/data", "-o", "out-%j.txt",
		"--wrap", "echo kept > /data/f; echo started; sleep 0.3; echo second; sleep 60")
	follow := exec.Command(filepath.Join(binDir, "corral"), "log", "-f", fmt.Sprint(id))
	follow.Env = append(os.Environ(), api.SocketEnv+"="+c.Socket)
	stdout, err := follow.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	defer follow.Process.Kill()
	lines := bufio.NewScanner(stdout)
	for _, want := range []string{"started", "second"} {
		if !lines.Scan() || lines.Text() != want {
			t.Fatalf("corral log -f: got %q (%v), want %q", lines.Text(), lines.Err(), want)
		}
	}
	if j := c.Job(id); j.State != api.StateRunning {
		t.Fatalf("the job is %s while its log was followed", j.State)
	}
	if r := c.Corral("cancel", fmt.Sprint(id)); r.Code != 0 {
		t.Fatalf("cancel: %+v", r)
	}
	c.WaitEnded(id, 30*time.Second)
	done := make(chan error, 1)
	go func() { done <- follow.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("corral log -f ended with %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("corral log -f did not end after the job did")
	}
	if b, err := os.ReadFile(filepath.Join(c.data, "alice", "f")); err != nil || string(b) != "kept\n" {
		t.Errorf("the mounted folder's file after cancel: %q, %v", b, err)
	}
	if r := c.Corral("log", fmt.Sprint(id)); r.Code != 0 || r.Stdout != "started\nsecond\n" {
		t.Errorf("log after the end: %+v", r)
	}
	for _, m := range []struct{ mount, want string }{
		{c.data + "/secret:/s:ro", "may not read"},
		{c.data + "/alice/escape:/e:ro", "leads out of"},
	} {
		id := c.submitAs("--mount", m.mount, "-o", "/dev/null", "--wrap", "true")
		if j := c.WaitEnded(id, 30*time.Second); j.State != api.StateFailed || !strings.Contains(j.Message, m.want) {
			t.Errorf("--mount %s: %s %q, want FAILED with %q", m.mount, j.State, j.Message, m.want)
		}
	}
	// A source under no node's --mount-root is refused at submit.
	if r := runCorral(t, c.Socket, c.work, "submit", "--mount", "/etc:/e:ro", "--wrap", "true"); r.Code == 0 || !strings.Contains(r.Stderr, "no node of partition batch allows --mount /etc") {
		t.Errorf("a mount outside every root: %+v", r)
	}
	if r := runCorral(t, c.Socket, c.work, "submit", "--mount", c.data+"/alice/../secret:/s", "--wrap", "true"); r.Code != 2 || !strings.Contains(r.Stderr, "not a clean path") {
		t.Errorf("a .. mount: %+v", r)
	}
}

// TestPolicyAndUsage covers acceptance items 4 and 5 through the CLI.
func TestPolicyAndUsage(t *testing.T) {
	c := startEnvCluster(t)
	usage := func() api.Usage {
		t.Helper()
		r := c.Corral("usage", "--user", "nobody", "--json")
		var u api.Usage
		if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &u) != nil || len(u.Partitions) != 1 || len(u.Users) != 1 {
			t.Fatalf("corral usage: %+v", r)
		}
		return u
	}
	before := usage()
	id := c.submitAs("-c", "2", "--mem", "300M", "-o", "/dev/null", "--wrap", "sleep 60")
	c.WaitState(id, api.StateRunning, 30*time.Second)
	during := usage()
	if d := during.Partitions[0].Allocated.CPUs - before.Partitions[0].Allocated.CPUs; d != 2 {
		t.Errorf("partition CPUs rose by %d, want 2", d)
	}
	if d := during.Users[0].Allocated.MemBytes - before.Users[0].Allocated.MemBytes; d != 300<<20 {
		t.Errorf("user memory rose by %d, want 300M", d)
	}
	c.Corral("cancel", fmt.Sprint(id))
	c.WaitEnded(id, 30*time.Second)
	if after := usage(); after.Partitions[0].Allocated != before.Partitions[0].Allocated || after.Users[0].Allocated != before.Users[0].Allocated {
		t.Errorf("usage after the job %+v, before %+v", after, before)
	}
	if r := c.Corral("usage"); r.Code != 0 || !strings.Contains(r.Stdout, "partition batch") {
		t.Errorf("corral usage: %+v", r)
	}

	if r := c.Corral("policy", "set", "user", "nobody", "--max-cpus", "1"); r.Code != 0 {
		t.Fatalf("policy set: %+v", r)
	}
	first := c.submitAs("-c", "1", "-o", "/dev/null", "--wrap", "sleep 60")
	second := c.submitAs("-c", "1", "-o", "/dev/null", "--wrap", "sleep 60")
	c.WaitState(first, api.StateRunning, 30*time.Second)
	j := c.WaitJob(second, 10*time.Second, "held by the policy", func(j *api.Job) bool { return j.Reason == api.ReasonPolicyMaxCPUs })
	if j.State != api.StatePending {
		t.Fatalf("second job %s", j.State)
	}
	c.Corral("cancel", fmt.Sprint(first))
	c.WaitState(second, api.StateRunning, 30*time.Second)
	c.Corral("cancel", fmt.Sprint(second))
	c.WaitEnded(second, 30*time.Second)
	if r := c.Corral("policy", "list"); r.Code != 0 || !strings.Contains(r.Stdout, "nobody") {
		t.Errorf("policy list: %+v", r)
	}
}
