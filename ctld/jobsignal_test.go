package ctld

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

func (f *fakeNode) deliveries() []api.NodeSignalRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.delivered)
}

// signalAs sends POST /v1/jobs/signal as uid and decodes a 200 answer.
func signalAs(t *testing.T, tc *testCluster, uid uint32, req api.SignalJobsRequest) (int, api.JobsResponse, string) {
	t.Helper()
	code, body := callAs(t, tc, uid, http.MethodPost, "/v1/jobs/signal", req)
	var resp api.JobsResponse
	if code == http.StatusOK {
		if err := json.Unmarshal(body, &resp); err != nil {
			t.Fatalf("answer %s: %v", body, err)
		}
	}
	return code, resp, string(body)
}

func signalOf(id uint64, sig int, scope api.SignalScope) api.SignalJobsRequest {
	return api.SignalJobsRequest{JobsRequest: api.JobsRequest{IDs: []uint64{id}}, Signal: sig, Scope: scope}
}

// A signal reaches the nodes that hold the processes of its scope, as in
// Slurm: the steps' (the default) on every node of the job, the batch
// script (batch, full) on the first node only. Nothing ends: the job
// runs on, and no node is told to stop it.
func TestSignalReachesTheNodesOfItsScope(t *testing.T) {
	tc, n1, n2, id, _, _ := twoNodeJob(t, twoNodeSpec())
	want := func(f *fakeNode, reqs ...api.NodeSignalRequest) {
		t.Helper()
		got := f.deliveries()
		if len(got) != len(reqs) {
			t.Fatalf("node %s got %+v, want %+v", f.name, got, reqs)
		}
		for i := range reqs {
			if got[i].JobID != reqs[i].JobID || got[i].Signal != reqs[i].Signal || got[i].Scope != reqs[i].Scope || got[i].Step != nil {
				t.Errorf("node %s delivery %d: %+v, want %+v", f.name, i, got[i], reqs[i])
			}
		}
	}
	steps := api.NodeSignalRequest{JobID: id, Signal: 10, Scope: api.SignalSteps}
	if code, resp, body := signalAs(t, tc, uidOwner, signalOf(id, 10, "")); code != 200 || !slices.Equal(resp.Done, []string{strconv.FormatUint(id, 10)}) {
		t.Fatalf("owner's signal: %d %s", code, body)
	}
	want(n1, steps)
	want(n2, steps)
	batch := api.NodeSignalRequest{JobID: id, Signal: 12, Scope: api.SignalBatch}
	full := api.NodeSignalRequest{JobID: id, Signal: 1, Scope: api.SignalFull}
	for _, r := range []api.SignalJobsRequest{signalOf(id, 12, api.SignalBatch), signalOf(id, 1, api.SignalFull)} {
		if code, resp, body := signalAs(t, tc, uidOwner, r); code != 200 || len(resp.Done) != 1 {
			t.Fatalf("%s: %d %s", r.Scope, code, body)
		}
	}
	want(n1, steps, batch, full)
	want(n2, steps)
	if j := tc.job(id); j.State != api.StateRunning || len(n1.signalled())+len(n2.signalled()) != 0 {
		t.Errorf("after the signals the job is %s and its nodes were told to stop it %v %v", j.State, n1.signalled(), n2.signalled())
	}
}

// Who may signal is who may cancel: the owner, an operator or above; a
// job that does not run takes no signal, with Slurm's words; a request
// with a signal or scope that does not exist is refused whole.
func TestSignalRefusals(t *testing.T) {
	tc, n1, _, id, _, _ := twoNodeJob(t, twoNodeSpec())
	pending := tc.submitFor(uidOwner, api.JobSpec{Name: "waits", Script: "#!/bin/sh\n", CPUs: 4, MemBytes: 1 << 20, WorkDir: "/tmp"})
	ref := strconv.FormatUint(id, 10)
	for _, c := range []struct {
		who  uint32
		req  api.SignalJobsRequest
		want string // the refusal of the job; "" when signalled
	}{
		{nobody, signalOf(id, 10, ""), "job " + ref + " belongs to sys"},
		{uidOperator, signalOf(id, 10, ""), ""},
		{uidAdmin, signalOf(id, 10, api.SignalBatch), ""},
		{uidOwner, signalOf(pending, 10, ""), "Job can not be altered now, try again later"},
		{uidOwner, signalOf(99999, 10, ""), "job 99999 does not exist"},
		{uidOwner, api.SignalJobsRequest{JobsRequest: api.JobsRequest{IDs: []uint64{id}}, Signal: 10, Step: ptr(5)}, "step " + ref + ".5 is not running"},
	} {
		code, resp, body := signalAs(t, tc, c.who, c.req)
		if code != 200 {
			t.Fatalf("uid %d %+v: %d %s", c.who, c.req, code, body)
		}
		name := strconv.FormatUint(c.req.IDs[0], 10)
		if got := resp.Errors[name]; got != c.want || (c.want == "") != slices.Contains(resp.Done, name) {
			t.Errorf("uid %d %+v: %s, want refusal %q", c.who, c.req, body, c.want)
		}
	}
	if got := len(n1.deliveries()); got != 2 {
		t.Errorf("node got %d deliveries, want the operator's and the admin's", got)
	}
	for _, bad := range []api.SignalJobsRequest{signalOf(id, 0, ""), signalOf(id, 65, ""), signalOf(id, 10, "all"),
		{JobsRequest: api.JobsRequest{IDs: []uint64{id}}, Signal: 10, Scope: api.SignalBatch, Step: ptr(0)}, {Signal: 10}} {
		if code, _, body := signalAs(t, tc, uidOwner, bad); code != http.StatusBadRequest {
			t.Errorf("%+v: %d %s, want 400", bad, code, body)
		}
	}
	if err := n1.end(id, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	tc.waitJob(id, "ended", inState(api.StateCompleted))
	if _, resp, body := signalAs(t, tc, uidOwner, signalOf(id, 10, "")); !strings.Contains(resp.Errors[ref], "already completing or completed") {
		t.Errorf("signal to an ended job: %s", body)
	}
}
