package noded

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/noded/nodedtest"
	"github.com/corral-hpc/corral/noded/shim"
)

// spareAfter waits for a spare other than the one with PID not and
// returns it.
func spareAfter(t *testing.T, n *node, not int) *spareShim {
	t.Helper()
	pid := sparePid(t, n, not)
	n.d.mu.Lock()
	defer n.d.mu.Unlock()
	if n.d.spare == nil || n.d.spare.cmd.Process.Pid != pid {
		t.Fatalf("spare %d is gone", pid)
	}
	return n.d.spare
}

// externReq is an extern part of an allocation of nobody's on n.
func (n *node) externReq(edit func(*api.LaunchRequest)) api.LaunchRequest {
	r := n.launchReq("")
	r.Role = api.RoleExtern
	if edit != nil {
		edit(&r)
	}
	return r
}

// launchedJob launches r, waits for its start and reads its launch.json.
func (n *node) launchedJob(t *testing.T, r api.LaunchRequest) *shim.Job {
	t.Helper()
	n.launch(t, r)
	n.ctld.Started(r.JobID)
	sj, err := shim.ReadJob(filepath.Join(n.d.jobsDir, formatUint(r.JobID)))
	if err != nil {
		t.Fatal(err)
	}
	return sj
}

func (n *node) endJob(t *testing.T, id uint64) {
	t.Helper()
	n.cancelJob(t, id)
	n.ctld.Ended(id)
}

// TestPreparedSpareChoice: noded's first spare prepares nothing; after an
// extern launch the next spare prepares a container for that job's
// identity (its directory with the spare as owner, the Preparation sent
// on its pipe); an extern launch of that identity is placed in the
// spare's cgroup and marked Prepared, one of another identity and a
// batch launch in their own (and not marked); after a batch launch the
// next spare prepares nothing. Every spare removes its directory.
func TestPreparedSpareChoice(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n := mustNode(t, ctld, "", fakeShimConfig(t), func(c *Config) { c.SpareShim = true })
	own := func(id uint64) string {
		p, err := n.d.cg.Place(cgroup.JobName(n.d.cgScope, id))
		if err != nil {
			t.Fatal(err)
		}
		return p.Path
	}
	check := func(what string, sj *shim.Job, prepared string) {
		t.Helper()
		want := own(sj.Launch.JobID)
		if prepared != "" {
			p, err := n.d.cg.Place(cgroup.SpareName(n.d.cgScope, prepared))
			if err != nil {
				t.Fatal(err)
			}
			want = p.Path
		}
		if sj.Prepared != prepared || sj.CgroupPath != want {
			t.Errorf("%s: prepared %q, cgroup %s; want prepared %q, cgroup %s", what, sj.Prepared, sj.CgroupPath, prepared, want)
		}
	}
	first := spareAfter(t, n, 0)
	if first.prep != nil {
		t.Errorf("noded's first spare prepares %+v; it knows no user yet", first.prep)
	}

	a := n.externReq(nil)
	check("an extern launch taking a plain spare", n.launchedJob(t, a), "")
	n.endJob(t, a.JobID)
	second := spareAfter(t, n, first.cmd.Process.Pid)
	p := second.prep
	if p == nil || p.UID != a.UID || p.GID != a.GID || p.RuncRoot != n.d.runcRoot || p.Dir != filepath.Join(n.d.sparesDir(), p.Token) {
		t.Fatalf("the spare after an extern launch prepares %+v; want a container for uid %d in %s", p, a.UID, n.d.sparesDir())
	}
	if got := shim.OwnerPid(p.Dir); got != second.cmd.Process.Pid {
		t.Errorf("the preparation's owner is %d, want the spare %d", got, second.cmd.Process.Pid)
	}
	var sent shim.Preparation
	if !containertest.Eventually(10*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(p.Dir, fakePreparedFile))
		return err == nil && json.Unmarshal(b, &sent) == nil
	}) || !reflect.DeepEqual(&sent, p) {
		t.Errorf("the spare was sent %+v, want %+v", sent, p)
	}

	b := n.externReq(nil)
	check("an extern launch of the same identity", n.launchedJob(t, b), p.Token)
	n.endJob(t, b.JobID)
	third := spareAfter(t, n, second.cmd.Process.Pid)
	if third.prep == nil || third.prep.Token == p.Token {
		t.Fatalf("the spare after a prepared launch prepares %+v; want a new preparation", third.prep)
	}

	c := n.externReq(func(r *api.LaunchRequest) { r.Groups = []uint32{containertest.Nobody, 100} })
	check("an extern launch with other groups", n.launchedJob(t, c), "")
	n.endJob(t, c.JobID)
	fourth := spareAfter(t, n, third.cmd.Process.Pid)
	if fourth.prep == nil || !reflect.DeepEqual(fourth.prep.Groups, c.Groups) {
		t.Fatalf("the spare after that launch prepares %+v; want that launch's groups %v", fourth.prep, c.Groups)
	}

	d := n.launchReq("true\n")
	check("a batch launch", n.launchedJob(t, d), "")
	n.endJob(t, d.JobID)
	fifth := spareAfter(t, n, fourth.cmd.Process.Pid)
	if fifth.prep != nil {
		t.Errorf("the spare after a batch launch prepares %+v; want nothing", fifth.prep)
	}
	n.stop()
	if !containertest.Eventually(10*time.Second, func() bool {
		ents, _ := os.ReadDir(n.d.sparesDir())
		return len(ents) == 0
	}) {
		ents, _ := os.ReadDir(n.d.sparesDir())
		t.Errorf("spare directories left: %v", ents)
	}
}

// TestSweepSpares: the sweep removes the directory of a spare that is
// dead (its owner file names a process that ended, or the right PID with
// another start time) or that has no owner file, and keeps a live
// spare's.
func TestSweepSpares(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n := mustNode(t, ctld, "", fakeShimConfig(t))
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	start, err := shim.ProcStart(self)
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]string{
		"aa01": fmt.Sprintf("%d %d\n", ended.Process.Pid, start),
		"aa02": fmt.Sprintf("%d %d\n", self, start+1),
		"aa03": "",
		"aa04": fmt.Sprintf("%d %d\n", self, start),
	}
	for token, owner := range owners {
		dir := filepath.Join(n.d.sparesDir(), token)
		if err := os.MkdirAll(filepath.Join(dir, shim.RootfsDir), 0o700); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(dir, shim.OwnerFile), []byte(owner), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	n.d.sweepSpares()
	for token := range owners {
		_, err := os.Stat(filepath.Join(n.d.sparesDir(), token))
		if live := token == "aa04"; live != (err == nil) {
			t.Errorf("spare %s (owner %q): kept %v, want kept %v", token, owners[token], err == nil, live)
		}
	}
}

// TestPreparedSpareRealShim, with the real shim and runc: an extern
// launch after another of the same user adopts the container the spare
// prepared (the job's cgroup is the spare's, and the prepared container
// is renamed after the job); the spare prepared after it, killed with
// its container running while it waits, is noticed by noded, which
// removes its container, cgroup and directory without a launch or a
// restart to prompt it, and no longer counts it as its spare.
func TestPreparedSpareRealShim(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n := mustNode(t, ctld, "", func(c *Config) { c.SpareShim = true })
	first := sparePid(t, n, 0)
	a := n.externReq(nil)
	n.launchedJob(t, a)
	n.endJob(t, a.JobID)
	second := spareAfter(t, n, first)
	if second.prep == nil {
		t.Fatal("no preparation after an extern launch")
	}
	place, err := n.d.cg.Place(cgroup.SpareName(n.d.cgScope, second.prep.Token))
	if err != nil {
		t.Fatal(err)
	}
	waitContainer(t, n, shim.SpareContainerID(second.prep.Token))
	b := n.externReq(nil)
	sj := n.launchedJob(t, b)
	if sj.Prepared != second.prep.Token {
		t.Fatalf("the second extern launch is not prepared: %+v", sj)
	}
	if dirs, err := container.CgroupDirs(n.d.runcRoot, shim.ContainerID(b.JobID)); err != nil || dirs["memory"] != place.Dirs["memory"] {
		t.Errorf("the adopted job's container: memory cgroup %s (%v), want the spare's %s", dirs["memory"], err, place.Dirs["memory"])
	}
	if _, err := os.Stat(filepath.Join(n.d.runcRoot, shim.SpareContainerID(second.prep.Token))); !os.IsNotExist(err) {
		t.Errorf("the prepared container still has its spare's name (%v)", err)
	}
	n.endJob(t, b.JobID)

	third := spareAfter(t, n, second.cmd.Process.Pid)
	if third.prep == nil {
		t.Fatal("no preparation after a prepared launch")
	}
	waitContainer(t, n, shim.SpareContainerID(third.prep.Token))
	gone, err := n.d.cg.Place(cgroup.SpareName(n.d.cgScope, third.prep.Token))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(third.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// noded notices by itself, with no launch and no restart to come.
	var leaks []string
	containertest.Eventually(10*time.Second, func() bool {
		leaks = containertest.Leaks(gone.Dirs, []string{third.prep.Dir}, cgroup.SpareName(n.d.cgScope, third.prep.Token))
		return len(leaks) == 0
	})
	if len(leaks) > 0 {
		t.Errorf("the dead spare left: %v", leaks)
	}
	for _, p := range []string{third.prep.Dir, filepath.Join(n.d.runcRoot, shim.SpareContainerID(third.prep.Token))} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("the dead spare left %s (%v)", p, err)
		}
	}
	n.d.mu.Lock()
	kept := n.d.spare != nil && n.d.spare.cmd.Process.Pid == third.cmd.Process.Pid
	n.d.mu.Unlock()
	if kept {
		t.Error("noded still counts the dead spare as its spare")
	}
}

// waitContainer waits for a container's libcontainer state in n's runc root.
func waitContainer(t *testing.T, n *node, id string) {
	t.Helper()
	if !containertest.Eventually(20*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(n.d.runcRoot, id, "state.json"))
		return err == nil
	}) {
		t.Fatalf("container %s never ran", id)
	}
}
