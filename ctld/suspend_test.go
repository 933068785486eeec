package ctld

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/corral-hpc/corral/api"
)

func (f *fakeNode) frozen() []api.NodeSuspendRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.freezes)
}

// suspendAs sends POST /v1/jobs/ACTION for one job as uid.
func suspendAs(t *testing.T, tc *testCluster, uid uint32, action string, id uint64) api.JobsResponse {
	t.Helper()
	code, body := callAs(t, tc, uid, http.MethodPost, "/v1/jobs/"+action, api.JobsRequest{IDs: []uint64{id}})
	var resp api.JobsResponse
	if code != http.StatusOK || json.Unmarshal(body, &resp) != nil {
		t.Fatalf("%s %d as %d: %d %s", action, id, uid, code, body)
	}
	return resp
}

// An operator suspends a running job on every node of it and resumes it;
// a repeated suspend does nothing, a resume of a running job is refused
// in Slurm's words. The suspended job keeps its nodes: a job that needs
// them waits. A cancel of the suspended job goes to its node, which
// thaws it to end it.
func TestSuspendResume(t *testing.T) {
	tc, n1, n2, id, _, _ := twoNodeJob(t, twoNodeSpec())
	ref := strconv.FormatUint(id, 10)
	if r := suspendAs(t, tc, uidOperator, "suspend", id); len(r.Done) != 1 || r.ErrorCount != 0 {
		t.Fatalf("suspend: %+v", r)
	}
	for _, f := range []*fakeNode{n1, n2} {
		if got := f.frozen(); len(got) != 1 || got[0] != (api.NodeSuspendRequest{JobID: id, Suspend: true}) {
			t.Errorf("node %s got %+v, want one freeze of job %d", f.name, got, id)
		}
	}
	j := tc.job(id)
	if j.State != api.StateSuspended || j.SuspendTime == nil {
		t.Fatalf("after suspend: %s, suspend time %v", j.State, j.SuspendTime)
	}
	if r := suspendAs(t, tc, uidOperator, "suspend", id); len(r.Done) != 1 || len(n1.frozen()) != 1 {
		t.Errorf("a second suspend: %+v, node calls %v; want done and no call", r, n1.frozen())
	}
	// The job holds all of n1 and n2: another one waits, suspended or not.
	other := tc.submitFor(uidOwner, api.JobSpec{Name: "waits", Script: "#!/bin/sh\n", CPUs: 4, MemBytes: 1 << 20, WorkDir: "/tmp"})
	tc.srv.Kick()
	tc.waitJob(other, "waiting for resources", func(j api.Job) bool { return j.Reason == api.ReasonResources })
	n1.noLaunch()
	n2.noLaunch()

	if r := suspendAs(t, tc, uidAdmin, "resume", id); len(r.Done) != 1 {
		t.Fatalf("resume: %+v", r)
	}
	if got := n2.frozen(); len(got) != 2 || got[1].Suspend {
		t.Errorf("node n2 got %+v, want a thaw after the freeze", got)
	}
	if j := tc.job(id); j.State != api.StateRunning {
		t.Errorf("after resume: %s", j.State)
	}
	if r := suspendAs(t, tc, uidOperator, "resume", id); r.Errors[ref] != "Job is not suspended" {
		t.Errorf("resume of a running job: %+v", r)
	}
	if r := suspendAs(t, tc, uidOperator, "suspend", other); r.Errors[strconv.FormatUint(other, 10)] != "Job is pending execution" {
		t.Errorf("suspend of a pending job: %+v", r)
	}

	suspendAs(t, tc, uidOperator, "suspend", id)
	if _, r, body := signalAs(t, tc, uidOwner, signalOf(id, 10, "")); r.Errors[ref] != "Job can not be altered now, try again later" {
		t.Errorf("a signal to the suspended job: %s", body)
	}
	if code, body := callAs(t, tc, uidOwner, http.MethodPost, "/v1/jobs/cancel", api.CancelRequest{IDs: []uint64{id}}); code != 200 {
		t.Fatalf("cancel: %d %s", code, body)
	}
	waitSignalled(t, n1, id)
	if err := n1.end(id, api.StateCancelled, 0); err != nil {
		t.Fatal(err)
	}
	if j := tc.waitJob(id, "cancelled", inState(api.StateCancelled)); j.SuspendTime == nil {
		t.Errorf("cancelled while suspended: %+v", j)
	}
}

// A node that cannot freeze the job leaves it running: the nodes that
// froze it are thawed, and the refusal says which node failed.
func TestSuspendNodeFailureUndoes(t *testing.T) {
	tc, n1, n2, id, _, _ := twoNodeJob(t, twoNodeSpec())
	n2.set(func(f *fakeNode) { f.refuseSuspend = true })
	r := suspendAs(t, tc, uidOperator, "suspend", id)
	if msg := r.Errors[strconv.FormatUint(id, 10)]; len(r.Done) != 0 || msg == "" {
		t.Fatalf("suspend with a failing node: %+v", r)
	}
	if got := n1.frozen(); len(got) != 2 || !got[0].Suspend || got[1].Suspend {
		t.Errorf("node n1 got %+v, want its freeze undone", got)
	}
	if j := tc.job(id); j.State != api.StateRunning {
		t.Errorf("after a failed suspend the job is %s", j.State)
	}
}
