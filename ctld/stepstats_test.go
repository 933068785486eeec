package ctld

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// A running step's live figures come from each of its nodes, named by
// the step's layout; a node that does not answer is listed as missing;
// only the job's owner and administrators may ask; a step not running
// is 404.
func TestStepStatsFromItsNodes(t *testing.T) {
	tc, nodes, id := stepCluster(t, 2)
	mustStep(t, tc, uidOwner, id, api.StepRequest{Ntasks: 2, NtasksPerNode: 1})
	nodes[0].set(func(f *fakeNode) { f.stepTasks = []api.TaskStats{{Rank: 0, MaxRSSBytes: 5 << 20}} })
	nodes[1].set(func(f *fakeNode) { f.stepTasks = []api.TaskStats{{Rank: 1, MaxRSSBytes: 7 << 20}} })
	path := fmt.Sprintf("/v1/jobs/%d/steps/0/stats", id)
	stats := func(uid uint32) (int, api.StepStats, string) {
		code, body := callAs(t, tc, uid, http.MethodGet, path, nil)
		var st api.StepStats
		if code == http.StatusOK {
			if err := json.Unmarshal(body, &st); err != nil {
				t.Fatalf("%s: %v", body, err)
			}
		}
		return code, st, string(body)
	}
	code, st, body := stats(uidOwner)
	if code != http.StatusOK || len(st.Tasks) != 2 || st.Tasks[0].Node != nodes[0].name || st.Tasks[1].Node != nodes[1].name ||
		st.Tasks[1].MaxRSSBytes != 7<<20 || len(st.Missing) != 0 {
		t.Fatalf("stats of a running step: %d %s", code, body)
	}
	if code, _, body := stats(nobody); code != http.StatusForbidden {
		t.Errorf("another user's stats: %d %s", code, body)
	}
	if code, _, body := stats(0); code != http.StatusOK {
		t.Errorf("root's stats: %d %s", code, body)
	}
	nodes[1].set(func(f *fakeNode) { f.stepTasks = nil })
	if code, st, body := stats(uidOwner); code != http.StatusOK || len(st.Tasks) != 1 || len(st.Missing) != 1 || st.Missing[0] != nodes[1].name {
		t.Errorf("a node not answering: %d %s", code, body)
	}
	code, body2 := callAs(t, tc, uidOwner, http.MethodGet, fmt.Sprintf("/v1/jobs/%d/steps/5/stats", id), nil)
	if code != http.StatusNotFound {
		t.Errorf("stats of a step not running: %d %s", code, body2)
	}
}
