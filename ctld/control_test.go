package ctld

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/lifecycle"
)

func TestHoldAndRelease(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	node := newFakeNode(tc, "n1", 1, 8<<30) // full once the first job runs
	node.register()
	spec := script("held")
	spec.Hold = true
	held := tc.submit(spec)
	tc.waitJob(held, "JobHeld", reasonIs(api.ReasonJobHeld))
	node.noLaunch()
	if resp := tc.control("release", held); len(resp.Done) != 1 || len(resp.Errors) != 0 {
		t.Fatalf("release: %+v", resp)
	}
	if l := node.waitLaunch(); l.JobID != held {
		t.Fatalf("launched %d, want %d", l.JobID, held)
	}
	// A running job is held in place (as Slurm's: the hold matters once
	// it is requeued); release lifts it.
	if resp := tc.control("hold", held); len(resp.Done) != 1 || len(resp.Errors) != 0 {
		t.Fatalf("hold of a running job: %+v", resp)
	}
	if j := tc.job(held); j.State != api.StateRunning || j.Hold != lifecycle.HoldAdmin {
		t.Fatalf("running job after a hold: %s hold %q", j.State, j.Hold)
	}
	if resp := tc.control("release", held); len(resp.Done) != 1 || tc.job(held).Hold != "" {
		t.Fatalf("release of the held running job: %+v, hold %q", resp, tc.job(held).Hold)
	}

	// Root's hold is an admin hold; the owner cannot lift it.
	owner := uint32(nobody)
	theirs := script("theirs")
	theirs.Hold = true
	id, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: theirs, OnBehalfOf: &owner})
	if err != nil {
		t.Skipf("needs root and a nobody account: %v", err)
	}
	ref := api.JobsRequest{IDs: []uint64{id}}
	tc.control("hold", id)
	tc.waitJob(id, "JobHeldAdmin", reasonIs(api.ReasonJobHeldAdmin))
	if resp := controlAs(t, tc, nobody, "release", ref); !strings.Contains(resp.Errors[fmt.Sprint(id)], "only an operator, administrator or root may release it") {
		t.Fatalf("owner released an admin hold: %+v", resp)
	}
	tc.control("release", id)
	// Users hold and release their own jobs, not others'.
	if resp := controlAs(t, tc, nobody, "hold", ref); len(resp.Done) != 1 || tc.job(id).Hold != lifecycle.HoldUser {
		t.Fatalf("owner's hold: %+v", resp)
	}
	if resp := controlAs(t, tc, nobody, "hold", api.JobsRequest{IDs: []uint64{held}}); !strings.Contains(resp.Errors[fmt.Sprint(held)], "belongs to") {
		t.Fatalf("hold of another's job: %+v", resp)
	}
	if resp := controlAs(t, tc, nobody, "release", ref); len(resp.Done) != 1 || tc.job(id).Hold != "" {
		t.Fatalf("owner's release: %+v", resp)
	}
}

func TestHoldArrayTasks(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	spec := arraySpec(t, "arr", "1-4")
	spec.Hold = true
	base := tc.submit(spec)
	// Releasing one task gives it a job of its own; the rest stay held.
	resp, err := tc.client.Control(context.Background(), "release", api.JobsRequest{Tasks: []api.TaskRef{{JobID: base, Task: 2}}})
	if err != nil || len(resp.Done) != 1 {
		t.Fatalf("release 2: %+v, %v", resp, err)
	}
	node := newFakeNode(tc, "n1", 4, 8<<30)
	node.register()
	if l := node.waitLaunch(); l.JobID != base+1 || l.Array.TaskID != 2 {
		t.Fatalf("launched %d, want task 2 (%d)", l.JobID, base+1)
	}
	tc.control("release", base)
	if got := node.launchedIDs(3); fmt.Sprint(got) != fmt.Sprint([]uint64{base, base + 2, base + 3}) {
		t.Fatalf("launched %v after releasing the array", got)
	}
}

func TestBeginTime(t *testing.T) {
	tc := MustServer(t, eventsOnly) // only housekeeping's wake-up can start it
	node := newFakeNode(tc, "n1", 2, 8<<30)
	node.register()
	spec := script("later")
	begin := time.Now().Add(700 * time.Millisecond)
	spec.Begin = &begin
	id := tc.submit(spec)
	tc.waitJob(id, "BeginTime", reasonIs(api.ReasonBeginTime))
	l := node.waitLaunch()
	if l.JobID != id || time.Now().Before(begin) {
		t.Fatalf("launched %d at %s, want %d after %s", l.JobID, time.Now(), id, begin)
	}
}

func TestRequeue(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	node := newFakeNode(tc, "n1", 2, 8<<30)
	node.register()
	id := tc.submit(script("again"))
	first := node.waitLaunch()
	tc.waitAcked(id)
	if st := tc.job(id).StartTime; st == nil || !first.Start.Equal(*st) {
		t.Fatalf("launch names its run by start %s, want the job's start %v", first.Start, st)
	}
	if resp := tc.control("requeue", id); len(resp.Done) != 1 {
		t.Fatalf("requeue: %+v", resp)
	}
	if sig := node.signalled(); len(sig) != 1 || sig[0] != id {
		t.Fatalf("signals %v", sig)
	}
	// Until the node reports the end, the job runs; then it is pending
	// again, with the run kept.
	if j := tc.job(id); j.State != api.StateRunning {
		t.Fatalf("before the end: %s", j.State)
	}
	node.set(func(f *fakeNode) { f.running = append(f.running, id) }) // the node still lists it
	if err := node.end(id, api.StateCancelled, 0); err != nil {
		t.Fatal(err)
	}
	node.set(func(f *fakeNode) { f.running = append(f.running, id) })
	node.register() // a heartbeat sent before the node dropped the run
	j := tc.job(id)
	if j.State != api.StatePending || j.Restarts != 1 || len(j.Runs) != 1 || j.Runs[0].State != api.StateRequeued ||
		j.Runs[0].StartTime.IsZero() || j.StartTime != nil {
		t.Fatalf("after requeue: %s restarts %d runs %+v", j.State, j.Restarts, j.Runs)
	}
	// Not relaunched while the node still lists the old run.
	tc.srv.Kick()
	time.Sleep(50 * time.Millisecond)
	node.noLaunch()
	node.set(func(f *fakeNode) { f.running = nil })
	node.register()
	l := node.waitLaunch()
	if l.JobID != id || l.Restarts != 1 || l.Start.IsZero() || l.Start.Equal(first.Start) {
		t.Fatalf("relaunch: job %d restarts %d start %s (first run's %s)", l.JobID, l.Restarts, l.Start, first.Start)
	}
	// A finished job goes back at once; pending and --no-requeue jobs
	// cannot be requeued.
	if err := node.end(id, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	tc.control("requeue", id)
	if j := tc.job(id); j.State != api.StatePending || j.Restarts != 2 || j.Runs[1].State != api.StateCompleted {
		t.Fatalf("requeue of a finished job: %s %d %+v", j.State, j.Restarts, j.Runs)
	}
	no := false
	spec := script("never")
	spec.Requeue = &no
	spec.Hold = true
	never := tc.submit(spec)
	resp := tc.control("requeue", never)
	if !strings.Contains(resp.Errors[fmt.Sprint(never)], "is pending") {
		t.Fatalf("requeue of a pending job: %+v", resp)
	}
}

func TestRequeueOnNodeFail(t *testing.T) {
	tc := MustServer(t, eventsOnly, func(c *Config) { c.NodeTimeout = 300 * time.Millisecond })
	node := newFakeNode(tc, "n1", 2, 8<<30)
	node.register()
	yes := true
	spec := script("resilient")
	spec.Requeue = &yes
	keep := tc.submit(spec)
	lose := tc.submit(script("fragile"))
	node.launchedIDs(2)
	// The node falls silent: the --requeue job goes back to PENDING, the
	// other ends NODE_FAIL.
	j := tc.waitJob(keep, "requeued", func(j api.Job) bool { return j.Restarts == 1 })
	if j.State != api.StatePending || j.Runs[0].State != api.StateNodeFail {
		t.Fatalf("requeued job: %s %+v", j.State, j.Runs)
	}
	tc.waitJob(lose, "NODE_FAIL", inState(api.StateNodeFail))
}

func TestUpdate(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	owner := uint32(nobody)
	spec := script("mine")
	spec.TimeLimit = 3600
	spec.Hold = true
	id, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: spec, OnBehalfOf: &owner})
	if err != nil {
		t.Skipf("needs root and a nobody account: %v", err)
	}
	other := tc.submit(spec)
	tests := []struct {
		name string
		uid  uint32
		req  api.UpdateRequest
		code int
		want string // error text; "" for success
	}{
		{"lower own", nobody, api.UpdateRequest{ID: id, TimeLimit: ptr[int64](1800)}, 200, ""},
		{"raise own", nobody, api.UpdateRequest{ID: id, TimeLimit: ptr[int64](7200)}, 200, "you may only lower the time limit (it is 00:30:00)"},
		{"unlimited", nobody, api.UpdateRequest{ID: id, TimeLimit: ptr[int64](0)}, 200, "you may only lower"},
		{"another's", nobody, api.UpdateRequest{ID: other, Name: ptr("x")}, 200, "belongs to root"},
		{"negative nice", nobody, api.UpdateRequest{ID: id, Nice: ptr(-5)}, 403, "only root may set a negative Nice"},
		{"nice and name", nobody, api.UpdateRequest{ID: id, Nice: ptr(10), Name: ptr("renamed")}, 200, ""},
		{"root raises", 0, api.UpdateRequest{ID: id, TimeLimit: ptr[int64](7200), Nice: ptr(-5)}, 200, ""},
		{"nothing", 0, api.UpdateRequest{ID: id}, 400, "nothing to change"},
		{"missing", 0, api.UpdateRequest{ID: 999999, Nice: ptr(1)}, 200, "job 999999 does not exist"},
	}
	for _, tt := range tests {
		code, body := callAs(t, tc, tt.uid, http.MethodPost, "/v1/jobs/update", tt.req)
		if code != tt.code {
			t.Errorf("%s: %d %s, want %d", tt.name, code, body, tt.code)
			continue
		}
		var resp api.JobsResponse
		if code != 200 {
			if !strings.Contains(errorText(t, body), tt.want) {
				t.Errorf("%s: %s, want %q", tt.name, body, tt.want)
			}
			continue
		}
		json.Unmarshal(body, &resp)
		if got := strings.Join(mapValues(resp.Errors), ";"); tt.want == "" && (got != "" || len(resp.Done) != 1) || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %+v, want %q", tt.name, resp, tt.want)
		}
	}
	j := tc.job(id)
	if j.TimeLimit != 7200 || j.Spec.Nice != -5 || j.Name != "renamed" || j.Spec.Name != "renamed" {
		t.Fatalf("after updates: limit %d nice %d name %q", j.TimeLimit, j.Spec.Nice, j.Name)
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// A time limit lowered while the job runs is enforced by the controller:
// it signals the node, and the end is recorded TIMEOUT.
func TestLoweredTimeLimitWhileRunning(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	node := newFakeNode(tc, "n1", 2, 8<<30)
	node.register()
	spec := script("long")
	spec.TimeLimit = 3600
	id := tc.submit(spec)
	node.waitLaunch()
	tc.waitAcked(id)
	if _, err := tc.client.Update(context.Background(), api.UpdateRequest{ID: id, TimeLimit: ptr[int64](1)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the controller's signal", func() bool { return len(node.signalled()) == 1 })
	if err := node.end(id, api.StateCancelled, 0); err != nil {
		t.Fatal(err)
	}
	if j := tc.job(id); j.State != api.StateTimeout || j.History[len(j.History)-1].State != api.StateTimeout {
		t.Fatalf("ended %s", j.State)
	}
}

func TestNiceLowersPriority(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	node := newFakeNode(tc, "n1", 1, 8<<30)
	node.register()
	first := tc.submit(script("first"))
	node.waitLaunch()
	nice := script("nice")
	nice.Nice = 100
	niceID := tc.submit(nice)
	plain := tc.submit(script("plain"))
	// Both have the same multifactor priority but for nice.
	tc.waitJob(niceID, "priority", func(j api.Job) bool { return tc.job(plain).Priority-j.Priority == 100 })
	if err := node.end(first, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	if l := node.waitLaunch(); l.JobID != plain {
		t.Fatalf("launched %d, want the job without nice (%d) first", l.JobID, plain)
	}
	nice.Nice = -1
	if code, body := callAs(t, tc, nobody, http.MethodPost, "/v1/jobs", api.SubmitRequest{Spec: nice}); code != 403 ||
		!strings.Contains(errorText(t, body), "only root may give a negative --nice") {
		t.Fatalf("negative nice by a user: %d %s", code, body)
	}
}

func TestWaitForEnd(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	node := newFakeNode(tc, "n1", 2, 8<<30)
	node.register()
	id := tc.submit(script("exit3"))
	node.waitLaunch()
	if resp, err := tc.client.Wait(context.Background(), fmt.Sprint(id), 0); err != nil || resp.Done {
		t.Fatalf("wait with timeout 0 on a running job: %+v, %v", resp, err)
	}
	got := make(chan *api.WaitResponse, 1)
	go func() {
		resp, err := tc.client.Wait(context.Background(), fmt.Sprint(id), 30*time.Second)
		if err != nil {
			t.Error(err)
		}
		got <- resp
	}()
	time.Sleep(30 * time.Millisecond)
	if err := node.end(id, api.StateFailed, 3); err != nil {
		t.Fatal(err)
	}
	select {
	case resp := <-got:
		if !resp.Done || resp.ExitStatus != 3 || resp.State != api.StateFailed {
			t.Fatalf("wait: %+v", resp)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the long poll did not answer when the job ended")
	}
	// An array: done when every task has ended, with the highest status.
	base := tc.submit(arraySpec(t, "arr", "0-1"))
	node.launchedIDs(2)
	node.end(base, api.StateFailed, 2)
	if resp, _ := tc.client.Wait(context.Background(), fmt.Sprint(base), 0); resp.Done {
		t.Fatalf("array done with a task running: %+v", resp)
	}
	node.end(base+1, api.StateCompleted, 0)
	if resp, err := tc.client.Wait(context.Background(), fmt.Sprint(base), time.Second); err != nil || !resp.Done || resp.ExitStatus != 2 {
		t.Fatalf("array wait: %+v, %v", resp, err)
	}
	if _, err := tc.client.Wait(context.Background(), "999999", 0); statusOf(err) != 404 {
		t.Fatalf("wait for a missing job: %v", err)
	}
}

func TestTestOnlyStoresNothing(t *testing.T) {
	tc := MustServer(t, withPartitions("PartitionName=batch Nodes=ALL Default=YES\nPartitionName=debug Nodes=n9\n"))
	node := newFakeNode(tc, "n1", 2, 8<<30)
	node.register()
	before, _ := tc.srv.store.LastJobID()
	resp, err := tc.client.TestSubmit(context.Background(), api.SubmitRequest{Spec: script("try")})
	if err != nil || resp.Start == nil || len(resp.Nodes) != 1 || resp.Nodes[0] != "n1" || resp.Job.Partition != "batch" || resp.Job.ID != 0 ||
		resp.JobID != before+1 {
		t.Fatalf("test-only: %+v, %v (want the next ID, %d)", resp, err, before+1)
	}
	held := script("held")
	held.Hold = true
	if resp, err := tc.client.TestSubmit(context.Background(), api.SubmitRequest{Spec: held}); err != nil || resp.Reason != api.ReasonJobHeld || resp.Start != nil {
		t.Fatalf("test-only of a held job: %+v, %v", resp, err)
	}
	for _, tt := range []struct {
		edit func(*api.JobSpec)
		want string
	}{
		{func(s *api.JobSpec) { s.Partition = "gpu" }, "partition gpu does not exist (partitions: batch, debug)"},
		{func(s *api.JobSpec) { s.CPUs = 64 }, "job asks for 64 CPUs per node but the largest node in partition batch has 2"},
		{func(s *api.JobSpec) { s.QOS = "high" }, "QOS high does not exist"},
		{func(s *api.JobSpec) { s.Account = "nosuch" }, "account nosuch does not exist"},
		{func(s *api.JobSpec) { s.Dependency = dependent(t, "", "afterok:424242").Dependency }, "job 424242 does not exist"},
	} {
		spec := script("bad")
		tt.edit(&spec)
		if _, err := tc.client.TestSubmit(context.Background(), api.SubmitRequest{Spec: spec}); statusOf(err) != 400 || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v, want 400 %q", err, tt.want)
		}
	}
	after, _ := tc.srv.store.LastJobID()
	recs, _ := tc.srv.store.Jobs()
	if after != before || len(recs) != 0 {
		t.Fatalf("test-only stored something: sequence %d -> %d, %d jobs", before, after, len(recs))
	}
	node.noLaunch()
}

// What a waiting job asks for changes as scontrol update changes it in
// Slurm (Partition, Dependency, StartTime, Account, QOS, Features, node
// lists, memory, Requeue), each update admitted again as a submit, so
// none leaves a job a submit would refuse; a running job keeps them, and
// its comment still changes.
func TestUpdateWhatAWaitingJobAsks(t *testing.T) {
	tc := MustServer(t, eventsOnly, withPartitions("PartitionName=batch Nodes=ALL Default=YES\nPartitionName=debug Nodes=n1 MaxTime=30\n"))
	node := newFakeNode(tc, "n1", 2, 8<<30)
	node.register()
	spec := script("waits")
	spec.Hold, spec.TimeLimit = true, 600
	id := tc.submit(spec)
	start := time.Now().Add(time.Hour).Truncate(time.Second)
	ok := []api.UpdateRequest{
		{ID: id, Partition: ptr("debug")},
		{ID: id, Dependency: ptr("afterany:" + strconv.FormatUint(id, 10))},
		{ID: id, Dependency: ptr("")},
		{ID: id, Begin: &start, Comment: ptr("later")},
		{ID: id, QOS: ptr("normal"), Requeue: ptr(true)},
		{ID: id, MemBytes: ptr[int64](1 << 30)},
		{ID: id, Exclude: &[]string{"n2"}},
	}
	for _, req := range ok {
		if resp, err := tc.client.Update(context.Background(), req); err != nil || len(resp.Errors) != 0 {
			t.Fatalf("update %+v: %+v %v", req, resp, err)
		}
	}
	j := tc.job(id)
	if j.Partition != "debug" || j.Spec.Partition != "debug" || j.Spec.Dependency != nil || j.Spec.Begin == nil ||
		!j.Spec.Begin.Equal(start) || j.Spec.Comment != "later" || j.Spec.QOS != "normal" || j.Spec.Requeue == nil || !*j.Spec.Requeue ||
		j.MemBytes != 1<<30 || !slices.Equal(j.Spec.Exclude, []string{"n2"}) {
		t.Fatalf("after the updates: %+v", j)
	}
	for _, c := range []struct {
		req  api.UpdateRequest
		want string
	}{
		{api.UpdateRequest{ID: id, Partition: ptr("gpu")}, "partition gpu does not exist"},
		{api.UpdateRequest{ID: id, MemBytes: ptr[int64](64 << 30)}, "could never run"},
		{api.UpdateRequest{ID: id, QOS: ptr("high")}, "QOS high does not exist"},
		{api.UpdateRequest{ID: id, Dependency: ptr("afterok:999999")}, "job 999999 does not exist"},
		{api.UpdateRequest{ID: id, Dependency: ptr("sometime:1")}, "dependency"},
		{api.UpdateRequest{ID: id, Partition: ptr("batch"), Constraint: ptr("nosuchfeature")}, "nosuchfeature"},
	} {
		resp, err := tc.client.Update(context.Background(), c.req)
		if err != nil || !strings.Contains(resp.Errors[strconv.FormatUint(id, 10)], c.want) {
			t.Errorf("update %+v: %+v %v, want %q", c.req, resp, err, c.want)
		}
	}
	if j2 := tc.job(id); j2.Partition != "debug" || j2.MemBytes != 1<<30 {
		t.Fatalf("a refused update changed the job: %s, %d bytes", j2.Partition, j2.MemBytes)
	}

	run := tc.submit(script("runs"))
	node.waitLaunch()
	tc.waitJob(run, "running", inState(api.StateRunning))
	if resp, err := tc.client.Update(context.Background(), api.UpdateRequest{ID: run, Comment: ptr("note")}); err != nil || len(resp.Errors) != 0 {
		t.Fatalf("comment of a running job: %+v %v", resp, err)
	}
	resp, err := tc.client.Update(context.Background(), api.UpdateRequest{ID: run, Partition: ptr("debug")})
	if err != nil || !strings.Contains(resp.Errors[strconv.FormatUint(run, 10)], "change only while it waits") {
		t.Errorf("partition of a running job: %+v %v", resp, err)
	}
	if j := tc.job(run); j.Spec.Comment != "note" || j.Partition != "batch" {
		t.Errorf("running job after the updates: comment %q, partition %s", j.Spec.Comment, j.Partition)
	}
}

// scontrol update ArrayTaskThrottle changes an array's %N as it runs:
// raised, a second task starts at once; the listing shows the new limit,
// which a restarted controller still applies.
func TestUpdateArrayTaskThrottle(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	node := newFakeNode(tc, "n1", 4, 8<<30)
	node.register()
	spec := script("arr")
	spec.Array = &api.JobArray{Ranges: []api.ArrayRange{{First: 0, Last: 5, Step: 1}}, MaxRunning: 1}
	id := tc.submit(spec)
	first := node.waitLaunch()
	time.Sleep(100 * time.Millisecond)
	node.noLaunch() // %1: one task at a time
	if resp, err := tc.client.Update(context.Background(), api.UpdateRequest{ID: id, ArrayTaskThrottle: ptr(2)}); err != nil || len(resp.Errors) != 0 {
		t.Fatalf("ArrayTaskThrottle=2: %+v %v", resp, err)
	}
	second := node.waitLaunch()
	if second.JobID == first.JobID {
		t.Fatalf("the same task launched twice: %d", second.JobID)
	}
	listed := func() string {
		var jobs []api.Job
		if err := tc.client.Do(context.Background(), http.MethodGet, "/v1/jobs", nil, &jobs); err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if j.ArrayTasks != "" {
				return j.ArrayTasks
			}
		}
		return ""
	}
	if got := listed(); !strings.HasSuffix(got, "%2") {
		t.Fatalf("pending tasks listed %q, want the %%2 limit", got)
	}
	tc.Restart()
	node.register()
	if got := listed(); !strings.HasSuffix(got, "%2") {
		t.Fatalf("after a restart the pending tasks are listed %q, want %%2", got)
	}
	for _, c := range []struct {
		req  api.UpdateRequest
		want string
	}{
		{api.UpdateRequest{ID: tc.submit(script("plain")), ArrayTaskThrottle: ptr(1)}, "is not an array job"},
		{api.UpdateRequest{ID: id, Task: ptr(3), ArrayTaskThrottle: ptr(1)}, "for an array job's own ID"},
		{api.UpdateRequest{ID: id, ArrayTaskThrottle: ptr(-1)}, "a number from 0"},
	} {
		resp, err := tc.client.Update(context.Background(), c.req)
		text := fmt.Sprint(err)
		if resp != nil {
			text += strings.Join(mapValues(resp.Errors), ";")
		}
		if !strings.Contains(text, c.want) {
			t.Errorf("update %+v: %s, want %q", c.req, text, c.want)
		}
	}
}
