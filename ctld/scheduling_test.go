package ctld

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
)

// Tests of multifactor priority, fairshare usage and the backfill planner
// in the running controller.

// twoUsers returns the uids of two system accounts (daemon and bin) to
// submit for with callAs as root, skipping the test if they are missing.
func twoUsers(t *testing.T) (heavy, light uint32) {
	t.Helper()
	for _, uid := range []string{"1", "2"} {
		if _, err := user.LookupId(uid); err != nil {
			t.Skipf("needs the system users daemon (1) and bin (2): %v", err)
		}
	}
	return 1, 2
}

// submitFor submits spec for uid as root would, through the user plane.
func (tc *testCluster) submitFor(uid uint32, spec api.JobSpec) uint64 {
	tc.t.Helper()
	code, body := callAs(tc.t, tc, 0, http.MethodPost, "/v1/jobs", api.SubmitRequest{Spec: spec, OnBehalfOf: &uid})
	var resp api.SubmitResponse
	if code != http.StatusOK || json.Unmarshal(body, &resp) != nil {
		tc.t.Fatalf("submit for uid %d: %d %s", uid, code, body)
	}
	return resp.JobID
}

// endAt reports a job's end at a given time.
func (f *fakeNode) endAt(id uint64, when time.Time) {
	f.t.Helper()
	f.mu.Lock()
	for i, x := range f.running {
		if x == id {
			f.running = append(f.running[:i], f.running[i+1:]...)
			break
		}
	}
	f.mu.Unlock()
	ev := api.JobEvent{JobID: id, Node: f.name, Kind: api.EventEnded, Time: when, State: api.StateCompleted}
	if err := f.ctld().Do(context.Background(), http.MethodPost, "/v1/node/events", api.EventsRequest{Events: []api.JobEvent{ev}}, nil); err != nil {
		f.t.Fatal(err)
	}
}

// usage is a user's usage in the live ledger, decayed to t.
func (tc *testCluster) usage(userName, account string, t time.Time) float64 {
	return tc.srv.fs.Usage(userName, account, t)
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func (tc *testCluster) prio() api.PrioResponse {
	tc.t.Helper()
	resp, err := tc.client.Prio(context.Background(), api.PrioFilter{})
	if err != nil {
		tc.t.Fatal(err)
	}
	return *resp
}

func prioOf(resp api.PrioResponse, id uint64) api.JobPrio {
	for _, j := range resp.Jobs {
		if j.JobID == id {
			return j
		}
	}
	return api.JobPrio{}
}

func TestUsageAccruesAndSurvivesRestart(t *testing.T) {
	tc := MustServer(t, eventsOnly, withPartitions("PartitionName=batch Nodes=ALL\nPriorityDecayHalfLife=0 TRESBillingWeights=CPU=10\n"))
	node := newFakeNode(tc, "n1", 4, 8<<30)
	node.register()
	spec := script("work")
	spec.CPUs = 2
	id := tc.submit(spec)
	node.waitLaunch()
	me := tc.job(id)
	account := me.Spec.Account
	if account != "default" {
		t.Fatalf("job account %q, want the default account", account)
	}
	// A save while the job runs: what a crash right after it leaves.
	time.Sleep(20 * time.Millisecond)
	if err := tc.srv.ledger.save(time.Now()); err != nil {
		t.Fatal(err)
	}
	whileRunning, err := tc.srv.store.Usage()
	if err != nil || whileRunning == nil {
		t.Fatalf("saved usage: %+v, %v", whileRunning, err)
	}
	start := *me.StartTime
	if got, want := tc.usage(me.User, account, whileRunning.ValidTo), 20*whileRunning.ValidTo.Sub(start).Seconds(); !near(got, want) || got <= 0 {
		t.Fatalf("usage while running %v, want 20 billing/s x %v = %v", got, whileRunning.ValidTo.Sub(start), want)
	}
	time.Sleep(20 * time.Millisecond)
	node.endAt(id, time.Now())
	end := *tc.waitJob(id, "COMPLETED", inState(api.StateCompleted)).EndTime
	want := 20 * end.Sub(start).Seconds()
	later := end.Add(time.Hour) // no decay: usage stays
	if got := tc.usage(me.User, account, later); !near(got, want) {
		t.Fatalf("usage after the end %v, want %v", got, want)
	}
	share, err := tc.client.Share(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range share.Rows {
		if r.User == me.User {
			found = r.Account == account && near(r.RawUsage, want) && r.EffectvUsage == 1 && r.FairShare != nil
		}
	}
	if !found {
		t.Fatalf("corral share rows %+v lack %s with usage %v", share.Rows, me.User, want)
	}

	tc.Restart() // clean: saved at shutdown
	if got := tc.usage(me.User, account, later); !near(got, want) {
		t.Fatalf("after a restart: usage %v, want %v (nothing charged twice)", got, want)
	}
	// As after a kill -9 while the job ran: only the save from then
	// survives; the restart re-charges from the job's recorded end.
	tc.Stop()
	st, err := store.Open(filepath.Join(tc.cfg.StateDir, store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutUsage(whileRunning); err != nil {
		t.Fatal(err)
	}
	st.Close()
	tc.start()
	if got := tc.usage(me.User, account, later); !near(got, want) {
		t.Fatalf("after a crash: usage %v, want %v", got, want)
	}
}

func TestFairsharePutsTheLightUserFirst(t *testing.T) {
	heavy, light := twoUsers(t)
	tc := MustServer(t, eventsOnly, withPartitions("PartitionName=batch Nodes=ALL\nTRESBillingWeights=CPU=1000\n"))
	node := newFakeNode(tc, "n1", 1, 8<<30)
	node.register()
	first := tc.submitFor(heavy, script("heavy-1"))
	node.waitLaunch()
	time.Sleep(20 * time.Millisecond) // usage accrues
	heavyWaits := tc.submitFor(heavy, script("heavy-2"))
	lightWaits := tc.submitFor(light, script("light"))
	tc.waitJob(lightWaits, "a priority", func(j api.Job) bool { return j.Priority > 0 })
	h, l := tc.job(heavyWaits), tc.job(lightWaits)
	if l.Priority <= h.Priority {
		t.Fatalf("light user's priority %d, heavy user's %d", l.Priority, h.Priority)
	}
	p := tc.prio()
	hp, lp := prioOf(p, heavyWaits), prioOf(p, lightWaits)
	if hp.User != h.User || lp.User != l.User || lp.Fairshare.Value != 1 || hp.Fairshare.Value >= 1 ||
		lp.Fairshare.Part != 10000 || p.Weights != (api.PrioWeights{Age: 1000, Fairshare: 10000, JobSize: 100}) ||
		lp.Priority != lp.Age.Part+lp.Fairshare.Part+lp.JobSize.Part || hp.Account != "default" {
		t.Fatalf("prio: heavy %+v light %+v weights %+v", hp, lp, p.Weights)
	}
	if f := prioOf(p, first); f.JobID != 0 {
		t.Fatalf("a running job is listed: %+v", f)
	}
	node.endAt(first, time.Now())
	if l := node.waitLaunch(); l.JobID != lightWaits {
		t.Fatalf("launched %d, want the light user's later job %d", l.JobID, lightWaits)
	}
	// Filters.
	resp, err := tc.client.Prio(context.Background(), api.PrioFilter{Users: []string{h.User}})
	if err != nil || len(resp.Jobs) != 1 || resp.Jobs[0].JobID != heavyWaits {
		t.Fatalf("prio -u %s: %+v, %v", h.User, resp, err)
	}
	if code, body := callAs(t, tc, 0, http.MethodGet, "/v1/prio?colour=red", nil); code != 400 ||
		errorText(t, body) != `unknown query parameter "colour" (valid: user, id)` {
		t.Fatalf("bad query: %d %s", code, body)
	}
}

// sprio lists the pending jobs that could start, as Slurm's: not a held
// job, one waiting for its begin time or one waiting for a dependency.
func TestPrioListsEligibleJobsOnly(t *testing.T) {
	tc := MustServer(t, eventsOnly, withPartitions("PartitionName=batch Nodes=ALL\n"))
	node := newFakeNode(tc, "n1", 1, 8<<30)
	node.register()
	running := tc.submit(script("running"))
	node.waitLaunch()
	waiting := tc.submit(script("waiting"))
	heldSpec := script("held")
	heldSpec.Hold = true
	held := tc.submit(heldSpec)
	later := script("later")
	begin := time.Now().Add(time.Hour)
	later.Begin = &begin
	early := tc.submit(later)
	dep := tc.submit(dependent(t, "after", fmt.Sprintf("afterok:%d", running)))
	tc.waitJob(dep, "the Dependency reason", func(j api.Job) bool { return j.Reason == api.ReasonDependency })
	var got []uint64
	for _, j := range tc.prio().Jobs {
		got = append(got, j.JobID)
	}
	if !slices.Equal(got, []uint64{waiting}) {
		t.Fatalf("prio lists %v, want only %d (held %d, begin %d, dependency %d, running %d)", got, waiting, held, early, dep, running)
	}
}

// Seed 004: with enough free resources every job starts at once, whatever
// its owner's usage.
func TestAmpleResourcesStartEveryone(t *testing.T) {
	heavy, light := twoUsers(t)
	tc := MustServer(t, eventsOnly, withPartitions("PartitionName=batch Nodes=ALL\nTRESBillingWeights=CPU=1000\n"))
	node := newFakeNode(tc, "n1", 4, 8<<30)
	node.register()
	used := tc.submitFor(heavy, script("used"))
	node.waitLaunch()
	time.Sleep(10 * time.Millisecond)
	node.endAt(used, time.Now())
	tc.waitJob(used, "COMPLETED", inState(api.StateCompleted))
	if tc.usage(tc.job(used).User, "default", time.Now()) <= 0 {
		t.Fatal("the heavy user has no usage")
	}
	a, b := tc.submitFor(heavy, script("a")), tc.submitFor(light, script("b"))
	if got := node.launchedIDs(2); got[0] != a || got[1] != b {
		t.Fatalf("launched %v, want both %d and %d", got, a, b)
	}
}

func TestAccountsAtSubmit(t *testing.T) {
	heavy, _ := twoUsers(t)
	tc := MustServer(t, eventsOnly, withPartitions("PartitionName=batch Nodes=ALL\n"+
		"AccountName=physics Fairshare=2\nAccountName=chem\nUserName=root DefaultAccount=physics Accounts=chem\n"))
	submit := func(uid uint32, account string) (int, string, uint64) {
		spec := script("acct")
		spec.Account = account
		code, body := callAs(t, tc, 0, http.MethodPost, "/v1/jobs", api.SubmitRequest{Spec: spec, OnBehalfOf: &uid})
		if code != http.StatusOK {
			return code, errorText(t, body), 0
		}
		var resp api.SubmitResponse
		json.Unmarshal(body, &resp)
		return code, "", resp.JobID
	}
	for _, tc2 := range []struct {
		uid     uint32
		account string
		code    int
		msg     string
		want    string // the stored account
	}{
		{0, "", 200, "", "physics"},
		{0, "chem", 200, "", "chem"},
		{0, "default", 400, "user root may not charge account default (root's accounts: physics, chem); nothing was submitted", ""},
		{0, "bio", 400, "account bio does not exist (accounts: chem, default, physics); nothing was submitted", ""},
		{heavy, "", 200, "", "default"},
		{heavy, "physics", 400, "may not charge account physics", ""},
	} {
		code, msg, id := submit(tc2.uid, tc2.account)
		if code != tc2.code || !strings.Contains(msg, tc2.msg) {
			t.Errorf("uid %d -A %q: %d %q, want %d %q", tc2.uid, tc2.account, code, msg, tc2.code, tc2.msg)
			continue
		}
		if id != 0 {
			if got := tc.job(id).Spec.Account; got != tc2.want {
				t.Errorf("uid %d -A %q: stored account %q, want %q", tc2.uid, tc2.account, got, tc2.want)
			}
		}
	}
	jobs, err := tc.client.Jobs(context.Background(), api.JobFilter{All: true})
	if err != nil || len(jobs) != 3 {
		t.Fatalf("%d jobs stored, want the 3 accepted (%v)", len(jobs), err)
	}
	// The tree as corral share shows it: root, physics (2 shares of 3)
	// with root's association, chem with root's, default with daemon's;
	// each user's default account marked * (sacctmgr's DefaultAccount).
	share, err := tc.client.Share(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range share.Rows {
		mark := ""
		if r.Default {
			mark = "*"
		}
		lines = append(lines, strings.Repeat(" ", r.Depth)+r.Account+"/"+r.User+mark+"="+strconv.FormatFloat(r.NormShares, 'f', 3, 64))
	}
	if share.DefaultAccount != "default" {
		t.Errorf("share: default account %q, want default", share.DefaultAccount)
	}
	want := "root/=1.000 chem/=0.250 chem/root=0.250 default/=0.250 default/daemon*=0.250 physics/=0.500 physics/root*=0.500"
	got := strings.Join(lines, " ")
	if strings.Join(strings.Fields(got), " ") != want {
		t.Errorf("share tree:\n%s\nwant\n%s", got, want)
	}
}

func TestPlannedStartForEveryPendingJob(t *testing.T) {
	tc := MustServer(t, eventsOnly, withPartitions("PartitionName=batch Nodes=ALL DefaultTime=10\n"))
	node := newFakeNode(tc, "n1", 2, 8<<30)
	node.register()
	var ids []uint64
	for i := range 5 {
		ids = append(ids, tc.submit(script("j"+strconv.Itoa(i))))
	}
	node.launchedIDs(2)
	start := *tc.job(ids[0]).StartTime
	for i, id := range ids[2:] {
		j := tc.waitJob(id, "a planned start", func(j api.Job) bool { return j.PlannedStart != nil })
		// Jobs 3 and 4 start when the first two end, job 5 ten minutes later.
		wantAt := start.Add(10 * time.Minute)
		if i == 2 {
			wantAt = wantAt.Add(10 * time.Minute)
		}
		if d := j.PlannedStart.Sub(wantAt); d < -time.Second || d > time.Second || strings.Join(j.PlannedNodes, ",") != "n1" {
			t.Errorf("job %d: planned %v on %v, want about %v on n1", id, j.PlannedStart, j.PlannedNodes, wantAt)
		}
		wantReason := api.ReasonPriority
		if i == 0 {
			wantReason = api.ReasonResources
		}
		if j.Reason != wantReason {
			t.Errorf("job %d: reason %s, want %s", id, j.Reason, wantReason)
		}
	}
}

// A short job starts in the gap before a big job's reservation without
// moving it; one too long for the gap waits. FCFS backfills nothing.
func TestBackfillInTheController(t *testing.T) {
	for _, tt := range []struct {
		conf          string
		shortStartsAt bool
	}{
		{"", true},
		{"SchedulerType=backfill BackfillMode=easy\n", true},
		{"SchedulerType=fcfs\n", false},
	} {
		t.Run(tt.conf, func(t *testing.T) {
			tc := MustServer(t, eventsOnly, withPartitions("PartitionName=batch Nodes=ALL\n"+tt.conf))
			node := newFakeNode(tc, "n1", 4, 8<<30)
			node.register()
			job := func(name string, cpus int, limit time.Duration) api.JobSpec {
				s := script(name)
				s.CPUs, s.TimeLimit = cpus, int64(limit/time.Second)
				return s
			}
			running := tc.submit(job("running", 2, 10*time.Minute))
			node.waitLaunch()
			big := tc.submit(job("big", 4, time.Hour))
			reserved := tc.waitJob(big, "a planned start", func(j api.Job) bool { return j.PlannedStart != nil })
			if want := tc.job(running).StartTime.Add(10 * time.Minute); !reserved.PlannedStart.Equal(want) {
				t.Fatalf("big job planned at %v, want the running job's end %v", reserved.PlannedStart, want)
			}
			long := tc.submit(job("long", 2, 20*time.Minute))
			short := tc.submit(job("short", 2, 5*time.Minute))
			if tt.shortStartsAt {
				if l := node.waitLaunch(); l.JobID != short {
					t.Fatalf("launched %d, want the short job %d", l.JobID, short)
				}
			} else {
				tc.waitJob(short, "reason Priority", reasonIs(api.ReasonPriority))
			}
			node.noLaunch()
			l := tc.waitJob(long, "a reason", func(j api.Job) bool { return j.Reason == api.ReasonPriority })
			if l.State != api.StatePending {
				t.Fatalf("the long job is %s", l.State)
			}
			if b := tc.job(big); b.State != api.StatePending || b.PlannedStart == nil || !b.PlannedStart.Equal(*reserved.PlannedStart) {
				t.Fatalf("big job now planned at %v, was %v", b.PlannedStart, reserved.PlannedStart)
			}
		})
	}
}

// Held time does not count for age; an array's pending tasks are one
// entry of corral prio.
func TestHeldJobsDoNotAge(t *testing.T) {
	tc := MustServer(t, eventsOnly, withPartitions("PartitionName=batch Nodes=ALL\nPriorityMaxAge=0:02\n"))
	node := newFakeNode(tc, "n1", 1, 8<<30)
	node.register()
	tc.submit(script("busy"))
	node.waitLaunch()
	plain := tc.submit(script("plain"))
	held := script("held")
	held.Hold = true
	heldID := tc.submit(held)
	array := tc.submit(arraySpec(t, "array", "0-2"))
	time.Sleep(500 * time.Millisecond)
	p := tc.prio()
	if a, h := prioOf(p, plain).Age, prioOf(p, heldID).Age; a.Value < 0.2 || h.Value != 0 {
		t.Fatalf("after 0.5 s of a 2 s max age: plain job's age %+v, held job's %+v", a, h)
	}
	if e := prioOf(p, array); e.Job != strconv.FormatUint(array, 10)+"_[0-2]" || e.Age.Value < 0.2 {
		t.Fatalf("array entry %+v (all: %+v)", e, p.Jobs)
	}
	tc.control("release", heldID)
	tc.waitJob(heldID, "released", func(j api.Job) bool { return j.Reason != api.ReasonJobHeld && j.Reason != api.ReasonNone })
	p = tc.prio()
	if a, h := prioOf(p, plain).Age, prioOf(p, heldID).Age; h.Value >= a.Value-0.1 {
		t.Fatalf("released job's age %+v should be well below the plain job's %+v", h, a)
	}
}

// A job whose dependency is satisfied is eligible in the very cycle that
// sees it satisfied, not from the next one: its wait counts from then, so
// the guard (here after 1 s) does not take it for a job that has waited
// since its submission. When the parent ends, its processor goes to the
// guarded job "old", not to the child submitted before it.
func TestDependencyIsEligibleAtOnce(t *testing.T) {
	tc := MustServer(t, eventsOnly, withPartitions("PartitionName=batch Nodes=ALL\nBackfillGuardAfter=0:01\n"))
	node := newFakeNode(tc, "n1", 2, 8<<30)
	node.register()
	limited := func(name string) api.JobSpec {
		s := script(name)
		s.TimeLimit = 60
		return s
	}
	tc.submit(limited("busy"))
	node.waitLaunch()
	parent := tc.submit(limited("parent"))
	node.waitLaunch()
	child := limited("child")
	child.Dependency = &api.Dependency{Conditions: []api.DependencyCondition{{Type: api.DependAfterOK, JobID: parent}}}
	childID := tc.submit(child)
	old := tc.submit(limited("old"))
	time.Sleep(1500 * time.Millisecond) // both submitted over the guard's second ago
	if err := node.end(parent, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	if l := node.waitLaunch(); l.JobID != old {
		t.Fatalf("launched %d, want the guarded job %d (the child %d became eligible only now)", l.JobID, old, childID)
	}
}
