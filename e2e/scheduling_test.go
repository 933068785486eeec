package e2e

import (
	"encoding/json"
	"os"
	"os/user"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// schedulingConf makes usage weigh heavily: a CPU-second costs 1000.
const schedulingConf = "PartitionName=batch Nodes=ALL Default=YES\nTRESBillingWeights=CPU=1000\n"

// needUsers skips a test without the system users it submits for.
func needUsers(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := user.Lookup(n); err != nil {
			t.Skipf("needs the system user %s: %v", n, err)
		}
	}
}

// sharedDir is a submit directory other users can reach and write: a
// fresh directory under the system temp dir, mode 0777 (t.TempDir's
// parent is private to root).
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "corral-e2e-share-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// prioRows runs corral prio with args and returns each job's row as
// column name -> value, in the order printed.
func prioRows(t *testing.T, c *Cluster, args ...string) (order []string, rows map[string]map[string]string) {
	t.Helper()
	r := c.Corral(append([]string{"prio"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("corral prio %v: exit %d: %s", args, r.Code, r.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	header := strings.Fields(lines[0])
	rows = map[string]map[string]string{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		row := map[string]string{}
		for i, h := range header {
			if i < len(f) {
				row[h] = f[i]
			}
		}
		order = append(order, f[0])
		rows[f[0]] = row
	}
	t.Logf("corral prio %v:\n%s", args, r.Stdout)
	return order, rows
}

// Seed 004: a user who has just used a lot waits for one who has not,
// though submitting first; corral prio -S y shows why; with enough free
// CPUs both start at once.
func TestSeedFairshareOrdersCompetingJobs(t *testing.T) {
	needRoot(t)
	needUsers(t, "daemon", "bin")
	c := StartCluster(t, ClusterOpts{Config: schedulingConf, Nodes: []NodeOpts{{Name: "n1", CPUs: 2, Mem: "2G"}}})
	dir := sharedDir(t)
	// daemon holds both CPUs for a few seconds, building usage.
	busy := c.Submit(dir, "--uid", "daemon", "-c", "2", "-t", "1", "-J", "busy", "-o", "/dev/null", "--wrap", "sleep 3")
	c.WaitState(busy, api.StateRunning, 15*time.Second)
	heavy := c.Submit(dir, "--uid", "daemon", "-c", "2", "-t", "1", "-J", "heavy", "-o", "/dev/null", "--wrap", "sleep 30")
	light := c.Submit(dir, "--uid", "bin", "-c", "2", "-t", "1", "-J", "light", "-o", "/dev/null", "--wrap", "sleep 30")
	h, l := strconv.FormatUint(heavy, 10), strconv.FormatUint(light, 10)
	c.WaitJob(light, 10*time.Second, "prioritised", func(j *api.Job) bool { return j.Priority > 0 })

	for _, sort := range [][]string{{"-S", "y"}, {"-Sy"}} {
		order, rows := prioRows(t, c, sort...)
		if len(order) != 2 || order[0] != l || order[1] != h {
			t.Fatalf("corral prio %v lists %v, want the light user's job %s above the heavy user's %s", sort, order, l, h)
		}
		hf, _ := strconv.Atoi(rows[h]["FAIRSHARE"])
		lf, _ := strconv.Atoi(rows[l]["FAIRSHARE"])
		if lf != 10000 || hf >= lf || rows[h]["USER"] != "daemon" || rows[l]["USER"] != "bin" {
			t.Fatalf("FAIRSHARE heavy %d light %d; rows %v", hf, lf, rows)
		}
	}
	// Every pending job has a planned start: the busy job's end.
	r := c.Corral("queue", "--start")
	if r.Code != 0 || strings.Count(r.Stdout, "\n") != 3 || strings.Contains(r.Stdout, "N/A") ||
		!strings.Contains(r.Stdout, "START_TIME") || !strings.Contains(r.Stdout, " n1 ") {
		t.Fatalf("corral queue --start: exit %d %s\n%s", r.Code, r.Stderr, r.Stdout)
	}
	var pending []api.Job
	if r := c.Corral("queue", "--start", "--json"); r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &pending) != nil || len(pending) != 2 {
		t.Fatalf("corral queue --start --json: %+v", r)
	}
	busyEnd := c.Job(busy).StartTime.Add(time.Minute)
	for _, j := range pending {
		if j.PlannedStart == nil || j.PlannedStart.Before(busyEnd.Add(-time.Second)) {
			t.Fatalf("job %d planned at %v, want at the busy job's end %v or later", j.ID, j.PlannedStart, busyEnd)
		}
	}

	// The CPUs free up: the later, lighter job starts first.
	c.WaitEnded(busy, 20*time.Second)
	c.WaitState(light, api.StateRunning, 10*time.Second)
	if j := c.Job(heavy); j.State != api.StatePending {
		t.Fatalf("heavy user's job is %s, want PENDING behind the light user's", j.State)
	}
	var share api.ShareResponse
	if r := c.Corral("share", "--json"); r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &share) != nil {
		t.Fatalf("corral share --json: %+v", r)
	}
	usage := map[string]float64{}
	for _, row := range share.Rows {
		usage[row.User] += row.RawUsage
	}
	// 2 CPUs x 1000 x about 3 s.
	if usage["daemon"] < 4000 || usage["daemon"] <= usage["bin"] {
		t.Fatalf("usage %v: daemon's should be about 6000 and above bin's", usage)
	}
	if r := c.Corral("cancel", h, l); r.Code != 0 {
		t.Fatalf("cancel: %+v", r)
	}
	c.WaitEnded(heavy, 10*time.Second)
	c.WaitEnded(light, 10*time.Second)

	// Enough free CPUs: both start at once, whatever the shares.
	a := c.Submit(dir, "--uid", "daemon", "-c", "1", "-o", "/dev/null", "--wrap", "sleep 30")
	b := c.Submit(dir, "--uid", "bin", "-c", "1", "-o", "/dev/null", "--wrap", "sleep 30")
	c.WaitState(a, api.StateRunning, 10*time.Second)
	c.WaitState(b, api.StateRunning, 10*time.Second)
	c.Corral("cancel", strconv.FormatUint(a, 10), strconv.FormatUint(b, 10))
}

// Usage survives a kill -9 of the controller: it is re-charged from the
// job records, not lost and not counted twice.
func TestUsageSurvivesCtldKill9(t *testing.T) {
	needRoot(t)
	c := StartCluster(t, ClusterOpts{Config: schedulingConf + "PriorityDecayHalfLife=0\n"})
	dir := jobDir(t)
	id := c.Submit(dir, "-c", "1", "-o", "/dev/null", "--wrap", "sleep 1")
	j := c.WaitEnded(id, 20*time.Second)
	want := 1000 * j.EndTime.Sub(*j.StartTime).Seconds()
	rootUsage := func() float64 {
		var share api.ShareResponse
		if r := c.Corral("share", "--json", "-u", "root"); r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &share) != nil {
			t.Fatalf("corral share: %+v", r)
		}
		sum := 0.0
		for _, row := range share.Rows {
			if row.User == "root" {
				sum += row.RawUsage
			}
		}
		return sum
	}
	before := rootUsage()
	// Charged by the controller: at least the recorded run, at most one
	// scheduling cycle (1 s) more, charged before the end arrived.
	if before < want*0.999 || before > want+1000 {
		t.Fatalf("usage %v, want about %v (1000 x the run)", before, want)
	}
	c.KillCtld()
	c.StartCtld()
	if after := rootUsage(); after < want*0.999 || after > before*1.001 {
		t.Fatalf("usage after kill -9: %v, was %v (run alone: %v)", after, before, want)
	}
}
