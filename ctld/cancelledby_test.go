package ctld

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// cancelledBy is the job's recorded canceller and its accounting
// record's, as "uid/uid" ("-" for none).
func cancelledBy(t *testing.T, tc *testCluster, id uint64) string {
	t.Helper()
	code, body := callAs(t, tc, 0, http.MethodGet, fmt.Sprintf("/v1/acct?id=%d", id), nil)
	var recs []api.AcctRecord
	if code != http.StatusOK || json.Unmarshal(body, &recs) != nil || len(recs) != 1 {
		t.Fatalf("accounting of job %d: %d %s", id, code, body)
	}
	show := func(p *uint32) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	return show(tc.job(id).CancelledBy) + "/" + show(recs[0].CancelledBy)
}

// Who cancelled a job is recorded on it and in its history (sacct's
// "CANCELLED by UID"): at once for a pending job, on the node's report
// for a running one; a job that ends CANCELLED with no one's cancel
// records no one.
func TestCancelledByIsRecorded(t *testing.T) {
	tc := MustServer(t)
	pending := tc.submitFor(uidOwner, script("waits"))
	if code, body := callAs(t, tc, uidOwner, http.MethodPost, "/v1/jobs/cancel", api.CancelRequest{IDs: []uint64{pending}}); code != http.StatusOK {
		t.Fatalf("cancel: %d %s", code, body)
	}
	if got, want := cancelledBy(t, tc, pending), fmt.Sprintf("%d/%d", uidOwner, uidOwner); got != want {
		t.Errorf("pending job cancelled by its owner: %s, want %s", got, want)
	}

	node := newFakeNode(tc, "n1", 2, 4<<30)
	node.register()
	running := tc.submitFor(uidOwner, script("runs"))
	node.waitLaunch()
	tc.waitAcked(running)
	if code, body := callAs(t, tc, 0, http.MethodPost, "/v1/jobs/cancel", api.CancelRequest{IDs: []uint64{running}}); code != http.StatusOK {
		t.Fatalf("cancel: %d %s", code, body)
	}
	if err := node.end(running, api.StateCancelled, 143); err != nil {
		t.Fatal(err)
	}
	tc.waitJob(running, "cancelled", inState(api.StateCancelled))
	if got := cancelledBy(t, tc, running); got != "0/0" {
		t.Errorf("running job cancelled by root: %s, want 0/0", got)
	}

	self := tc.submitFor(uidOwner, script("killed"))
	node.waitLaunch()
	tc.waitAcked(self)
	if err := node.end(self, api.StateCancelled, 143); err != nil {
		t.Fatal(err)
	}
	tc.waitJob(self, "cancelled", inState(api.StateCancelled))
	if got := cancelledBy(t, tc, self); got != "-/-" {
		t.Errorf("job cancelled by no one's cancel: %s, want -/-", got)
	}
}

// A running job's canceller survives a controller restart between the
// cancel and the node's report of the end.
func TestCancelledBySurvivesRestart(t *testing.T) {
	tc := MustServer(t)
	node := newFakeNode(tc, "n1", 2, 4<<30)
	node.register()
	running := tc.submitFor(uidOwner, script("runs"))
	node.waitLaunch()
	tc.waitAcked(running)
	if code, body := callAs(t, tc, uidOwner, http.MethodPost, "/v1/jobs/cancel", api.CancelRequest{IDs: []uint64{running}}); code != http.StatusOK {
		t.Fatalf("cancel: %d %s", code, body)
	}
	tc.Restart()
	node.register()
	if err := node.end(running, api.StateCancelled, 143); err != nil {
		t.Fatal(err)
	}
	tc.waitJob(running, "cancelled", inState(api.StateCancelled))
	if got, want := cancelledBy(t, tc, running), fmt.Sprintf("%d/%d", uidOwner, uidOwner); got != want {
		t.Errorf("running job cancelled by its owner, then a restart: %s, want %s", got, want)
	}
}

// A step's cancel records who asked, as sacct prints it on the step's
// line ("CANCELLED by UID").
func TestStepCancelledBy(t *testing.T) {
	tc, _, id := stepCluster(t, 1)
	mustStep(t, tc, uidOwner, id, api.StepRequest{})
	if code, body := callAs(t, tc, uidOwner, http.MethodPost, "/v1/steps/cancel", api.StepCancelRequest{JobID: id, StepID: 0}); code != http.StatusOK {
		t.Fatalf("cancel step: %d %s", code, body)
	}
	if st := stepOf(t, tc, id, 0); st.CancelledBy == nil || *st.CancelledBy != uidOwner {
		t.Errorf("step cancelled by its owner: %+v", st)
	}
}
