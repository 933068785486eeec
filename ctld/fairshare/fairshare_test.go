package fairshare

import (
	"fmt"
	"iter"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/config"
	"github.com/corral-hpc/corral/ctld/lifecycle"
	"github.com/corral-hpc/corral/ctld/store"
)

// testRules stand in for the controller's: a GPU request counts as
// physical GPUs, and any hold or a begin time ahead blocks.
var testRules = Rules{
	PhysicalGPUs: func(job *api.Job, nodes int) float64 { return float64(job.GPUs * max(nodes, 1)) },
	HeldOrEarly: func(job *api.Job, now time.Time) bool {
		return job.Hold != "" || job.Spec.Begin != nil && now.Before(*job.Spec.Begin)
	},
}

// MustFairshare builds the controller's fairshare state from corral.conf
// scheduling lines (a partition line is added).
func MustFairshare(t testing.TB, lines string) *State {
	t.Helper()
	file, err := config.ParseFile(strings.NewReader("PartitionName=batch Nodes=ALL\n"+lines), "corral.conf")
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(file.Scheduling, testRules)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

var fsEpoch = time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)

func at(s int) time.Time { return fsEpoch.Add(time.Duration(s) * time.Second) }

// usageSim replays job starts, ends, requeues, failed launches, cycles
// and saves through the charging code, keeping job records as the
// controller commits them.
type usageSim struct {
	t      *testing.T
	f      *State
	jobs   map[uint64]*api.Job
	active map[uint64]*api.Job
	saved  *store.UsageRecord
}

func newUsageSim(t *testing.T, f *State, specs map[uint64][2]int) *usageSim {
	u := &usageSim{t: t, f: f, jobs: map[uint64]*api.Job{}, active: map[uint64]*api.Job{}}
	for id, cn := range specs {
		user := "alice"
		if id%2 == 0 {
			user = "bob"
		}
		j := &api.Job{ID: id, User: user, State: api.StatePending, CPUs: cn[0], NodeCount: cn[1],
			MemBytes: 1 << 30, SubmitTime: fsEpoch, Spec: api.JobSpec{Account: "default"}}
		u.jobs[id], u.active[id] = j, j
	}
	return u
}

// commit installs a job's next record as the controller does: the end of
// a run is charged before it is installed.
func (u *usageSim) commit(j *api.Job, next api.Job) {
	u.f.ChargeEnd(j, &next, time.Now())
	*j = next
	if next.State.Terminal() {
		delete(u.active, next.ID)
	}
}

// step is j after ev at t, as the controller records it (package lifecycle).
func (u *usageSim) step(j *api.Job, ev lifecycle.Event, t time.Time) {
	next, err := lifecycle.Next(*j, ev, t)
	if err != nil {
		u.t.Fatal(err)
	}
	u.commit(j, next)
}

func (u *usageSim) apply(ev string, id uint64, t time.Time) {
	f := u.f
	j := u.jobs[id]
	switch ev {
	case "start":
		var nodes []string
		for i := range max(j.NodeCount, 1) {
			nodes = append(nodes, fmt.Sprintf("n%d", i+1))
		}
		u.step(j, lifecycle.Event{Kind: lifecycle.Start, Nodes: nodes}, t)
	case "end":
		u.step(j, lifecycle.Event{Kind: lifecycle.End, State: api.StateCompleted}, t)
	case "requeue": // the run goes to Runs, the job back to PENDING
		u.step(j, lifecycle.Event{Kind: lifecycle.Requeue}, t)
	case "fail": // a failed launch: back to PENDING, no run recorded
		u.step(j, lifecycle.Event{Kind: lifecycle.LaunchFailed}, t)
	case "cycle":
		f.mu.Lock()
		f.chargeRunning(all(u.active), t)
		f.mu.Unlock()
	case "save":
		rec, err := f.Record(all(u.active), t, func(uint64) bool { return true })
		if err != nil {
			u.t.Fatal(err)
		}
		u.saved = rec
	default:
		u.t.Fatalf("unknown event %s", ev)
	}
}

func all(m map[uint64]*api.Job) iter.Seq[*api.Job] {
	return func(yield func(*api.Job) bool) {
		for _, j := range m {
			if !yield(j) {
				return
			}
		}
	}
}

// records is a copy of the job records, as a crash leaves them.
func (u *usageSim) records() iter.Seq[*api.Job] {
	out := make(map[uint64]*api.Job, len(u.jobs))
	for id, j := range u.jobs {
		c := *j
		out[id] = &c
	}
	return all(out)
}

// oracle is usage by user from the records alone: billing x the time each
// recorded run overlapped (-inf, upTo), a running run lasting till upTo.
// It holds only without decay.
func oracle(f *State, jobs map[uint64]*api.Job, upTo time.Time) map[string]float64 {
	out := map[string]float64{}
	add := func(job *api.Job, nodes int, from, to time.Time) {
		if to.After(upTo) {
			to = upTo
		}
		if to.After(from) {
			out[job.User] += f.Billing(job, nodes) * to.Sub(from).Seconds()
		}
	}
	for _, job := range jobs {
		for _, r := range job.Runs {
			add(job, len(r.Nodes), r.StartTime, r.EndTime)
		}
		if job.StartTime != nil {
			end := upTo
			if job.EndTime != nil {
				end = *job.EndTime
			}
			add(job, len(job.Nodes), *job.StartTime, end)
		}
	}
	return out
}

func usageOf(f *State, user string, t time.Time) float64 { return f.Usage(user, "default", t) }

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// The rule of the package doc: a restart from the last save plus the job
// records gives exactly the usage the records show, whenever the crash
// came, and the same ledger as a controller that never stopped. A failed
// launch between two cycles records no run and is charged nowhere.
func TestUsageSurvivesCrashAtAnyPoint(t *testing.T) {
	events := []struct {
		at int
		ev string
		id uint64
	}{
		{0, "start", 1}, {3, "cycle", 0}, {5, "save", 0}, {10, "start", 2}, {12, "cycle", 0},
		{15, "end", 1}, {17, "save", 0}, {20, "requeue", 2}, {22, "cycle", 0}, {25, "start", 2},
		{26, "start", 3}, {27, "fail", 3}, {28, "start", 3}, {30, "cycle", 0}, {33, "save", 0},
		{38, "end", 2}, {40, "cycle", 0}, {44, "end", 3},
	}
	specs := map[uint64][2]int{1: {2, 1}, 2: {1, 2}, 3: {4, 1}} // CPUs per node, nodes
	const restartAt = 60
	for _, decay := range []string{"PriorityDecayHalfLife=0", "PriorityDecayHalfLife=1:00:00"} {
		conf := decay + "\nTRESBillingWeights=CPU=1,Mem=0.5G\n"
		for crash := 0; crash <= len(events); crash++ {
			// A controller that ran the first crash events, then died.
			live := newUsageSim(t, MustFairshare(t, conf), specs)
			for _, e := range events[:crash] {
				live.apply(e.ev, e.id, at(e.at))
			}
			// Its successor: the last save and the records.
			back := MustFairshare(t, conf)
			err := back.Restore(live.saved, live.records(), at(restartAt))
			if err != nil {
				t.Fatal(err)
			}
			// Had it not died, the same runs up to the restart.
			live.apply("cycle", 0, at(restartAt))
			want := oracle(live.f, live.jobs, at(restartAt))
			for _, user := range []string{"alice", "bob"} {
				got, same := usageOf(back, user, at(restartAt)), usageOf(live.f, user, at(restartAt))
				if !near(got, same) {
					t.Errorf("%s, crash after %d events: %s's usage %v after restart, %v without one", decay, crash, user, got, same)
				}
				if decay == "PriorityDecayHalfLife=0" && !near(got, want[user]) {
					t.Errorf("crash after %d events: %s's usage %v, records say %v", crash, user, got, want[user])
				}
			}
		}
	}
	// The whole run: alice 2 CPUs + 0.5 GiB for 15 s, 4.5 billing/s for
	// 16 s (28 to 44); bob 2 nodes x 1.5 for 10 s then 13 s.
	f := MustFairshare(t, "PriorityDecayHalfLife=0\nTRESBillingWeights=CPU=1,Mem=0.5G\n")
	u := newUsageSim(t, f, specs)
	for _, e := range events {
		u.apply(e.ev, e.id, at(e.at))
	}
	if a, b := usageOf(f, "alice", at(99)), usageOf(f, "bob", at(99)); !near(a, 2.5*15+4.5*16) || !near(b, 3*(10+13)) {
		t.Errorf("usage alice %v bob %v", a, b)
	}
}

// A save followed at once by a restart changes nothing: no double count.
func TestCleanRestartChargesNothingTwice(t *testing.T) {
	conf := "PriorityDecayHalfLife=0\n"
	u := newUsageSim(t, MustFairshare(t, conf), map[uint64][2]int{1: {2, 1}})
	u.apply("start", 1, at(0))
	u.apply("cycle", 0, at(10))
	u.apply("save", 0, at(20))
	for _, restart := range []int{20, 30} {
		back := MustFairshare(t, conf)
		back.Restore(u.saved, u.records(), at(restart))
		want := u.f.Billing(u.jobs[1], 1) * float64(restart)
		if got := usageOf(back, "alice", at(restart)); !near(got, want) {
			t.Errorf("restart at %d: usage %v, want %v", restart, got, want)
		}
	}
	// Without any record, every recorded run is charged from its start.
	fresh := MustFairshare(t, conf)
	fresh.Restore(nil, u.records(), at(30))
	if got, want := usageOf(fresh, "alice", at(30)), u.f.Billing(u.jobs[1], 1)*30; !near(got, want) {
		t.Errorf("no record: %v, want %v", got, want)
	}
	// An unreadable record is reported and rebuilt the same way.
	bad := MustFairshare(t, conf)
	err := bad.Restore(&store.UsageRecord{ValidTo: at(20), Ledger: []byte(`{"version":7}`)}, u.records(), at(30))
	if err == nil || !near(usageOf(bad, "alice", at(30)), usageOf(fresh, "alice", at(30))) {
		t.Errorf("unreadable record: %v, usage %v", err, usageOf(bad, "alice", at(30)))
	}
}

func TestEligibilitySkipsBlockedTime(t *testing.T) {
	f := MustFairshare(t, "")
	job := &api.Job{ID: 4, SubmitTime: at(0), History: []api.Transition{{State: api.StatePending, Time: at(0)}}}
	f.mu.Lock()
	defer f.mu.Unlock()
	if got := f.eligibleAt(job, at(10)); !got.Equal(at(0)) {
		t.Errorf("never blocked: eligible %v", got)
	}
	f.noteEligibility(4, api.ReasonDependency, at(20))
	if got := f.eligibleAt(job, at(30)); !got.IsZero() {
		t.Errorf("blocked: eligible %v", got)
	}
	f.noteEligibility(4, api.ReasonPriority, at(40))
	if got := f.eligibleAt(job, at(50)); !got.Equal(at(40)) {
		t.Errorf("released at 40: eligible %v", got)
	}
	f.noteEligibility(4, api.ReasonResources, at(60)) // still eligible: unchanged
	if got := f.eligibleAt(job, at(70)); !got.Equal(at(40)) {
		t.Errorf("eligible %v, want 40", got)
	}
	// A held job and one whose begin time is ahead are not eligible yet,
	// even before a cycle has seen them; a passed begin time counts from
	// then; a failed launch does not restart the wait, a requeue does.
	held := &api.Job{ID: 5, SubmitTime: at(0), Hold: "user"}
	begin := at(100)
	early := &api.Job{ID: 6, SubmitTime: at(0), Spec: api.JobSpec{Begin: &begin}}
	bounced := &api.Job{ID: 7, SubmitTime: at(0), History: []api.Transition{{State: api.StatePending, Time: at(0)},
		{State: api.StateRunning, Time: at(5)}, {State: api.StatePending, Reason: api.ReasonLaunchFailed, Time: at(6)}}}
	requeue := &api.Job{ID: 8, SubmitTime: at(0), History: []api.Transition{{State: api.StatePending, Time: at(0)},
		{State: api.StateRunning, Time: at(5)}, {State: api.StateRequeued, Time: at(9)}, {State: api.StatePending, Time: at(9)}}}
	for _, tc := range []struct {
		job  *api.Job
		now  int
		want time.Time
	}{
		{held, 50, time.Time{}}, {early, 50, time.Time{}}, {early, 150, at(100)}, {bounced, 50, at(0)}, {requeue, 50, at(9)},
	} {
		if got := f.eligibleAt(tc.job, at(tc.now)); !got.Equal(tc.want) {
			t.Errorf("job %d at %d: eligible %v, want %v", tc.job.ID, tc.now, got, tc.want)
		}
	}
	if c := f.calc.AgeFactor(time.Time{}, at(50)); c != 0 {
		t.Errorf("age of an ineligible job: %v", c)
	}
}

func TestBillingCountsEveryNode(t *testing.T) {
	f := MustFairshare(t, "TRESBillingWeights=CPU=1,Mem=0.25G\n")
	job := &api.Job{CPUs: 4, MemBytes: 8 << 30}
	if got := f.Billing(job, 3); !near(got, 3*(4+0.25*8)) {
		t.Errorf("billing %v", got)
	}
	if got := f.Billing(job, 0); !near(got, 4+0.25*8) {
		t.Errorf("billing of an unplaced job %v", got)
	}
}
