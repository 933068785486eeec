package ctld

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// acctIDs lists the records' job references ("12", "12_3", "12_[4-5]"),
// with "/REQUEUED" style suffixes for earlier runs.
func acctRefs(recs []api.AcctRecord) string {
	var out []string
	for _, r := range recs {
		ref := fmt.Sprint(r.JobID)
		switch {
		case r.ArrayTasks != "":
			ref = fmt.Sprintf("%d_[%s]", r.ArrayJobID, r.ArrayTasks)
		case r.ArrayTaskID != nil:
			ref = fmt.Sprintf("%d_%d", r.ArrayJobID, *r.ArrayTaskID)
		}
		out = append(out, ref+":"+string(r.State))
	}
	return strings.Join(out, " ")
}

func TestAcctFilters(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	node := newFakeNode(tc, "n1", 8, 8<<30)
	node.register()
	ends := []api.JobState{api.StateCompleted, api.StateFailed, api.StateOutOfMemory, api.StateTimeout,
		api.StateNodeFail, api.StateCompleted}
	var ids []uint64
	for i, st := range ends {
		ids = append(ids, tc.submit(script(fmt.Sprintf("j%d", i))))
		node.waitLaunch()
		if err := node.end(ids[i], st, i); err != nil {
			t.Fatal(err)
		}
	}
	spec := script("never-ran")
	spec.Hold = true
	cancelled := tc.submit(spec)
	tc.client.Cancel(context.Background(), api.CancelRequest{IDs: []uint64{cancelled}})
	running := tc.submit(script("running"))
	node.waitLaunch()
	arr := tc.submit(arraySpec(t, "arr", "0-3"))
	node.launchedIDs(4)
	node.end(arr, api.StateCompleted, 0)
	node.end(arr+1, api.StateCompleted, 0)
	tc.control("requeue", arr+1) // a finished task back to pending: its run stays in the history

	acct := func(f api.AcctFilter) string {
		t.Helper()
		recs, err := tc.client.Acct(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		return acctRefs(recs)
	}
	id := func(i int) uint64 { return ids[i] }
	tests := []struct {
		name string
		f    api.AcctFilter
		want string
	}{
		{"FINISHED tab", api.AcctFilter{States: []api.JobState{api.StateCompleted}},
			fmt.Sprintf("%d:COMPLETED %d:COMPLETED %d_0:COMPLETED %d_1:COMPLETED", id(0), id(5), arr, arr)},
		{"OTHERS tab", api.AcctFilter{States: []api.JobState{api.StateFailed, api.StateOutOfMemory, api.StateTimeout, api.StateNodeFail}},
			fmt.Sprintf("%d:FAILED %d:OUT_OF_MEMORY %d:TIMEOUT %d:NODE_FAIL", id(1), id(2), id(3), id(4))},
		{"by ID", api.AcctFilter{IDs: []uint64{id(1), cancelled, running}}, fmt.Sprintf("%d:FAILED %d:CANCELLED", id(1), cancelled)},
		{"array", api.AcctFilter{IDs: []uint64{arr}}, fmt.Sprintf("%d_0:COMPLETED %d_1:COMPLETED", arr, arr)},
		{"task", api.AcctFilter{Tasks: []api.TaskRef{{JobID: arr, Task: 1}}}, fmt.Sprintf("%d_1:COMPLETED", arr)},
		{"window after", api.AcctFilter{Start: time.Now().Add(time.Hour)}, ""},
		{"window before", api.AcctFilter{End: time.Now().Add(-time.Hour)}, ""},
		{"other user", api.AcctFilter{Users: []string{"nobody"}}, ""},
		{"by name", api.AcctFilter{Names: []string{"j2", "running"}}, fmt.Sprintf("%d:OUT_OF_MEMORY", id(2))},
		{"newest page", api.AcctFilter{States: []api.JobState{api.StateCompleted}, Limit: 2},
			fmt.Sprintf("%d_0:COMPLETED %d_1:COMPLETED", arr, arr)},
		{"the page before", api.AcctFilter{States: []api.JobState{api.StateCompleted}, Limit: 2, Before: arr},
			fmt.Sprintf("%d:COMPLETED %d:COMPLETED", id(0), id(5))},
		{"before alone", api.AcctFilter{Before: id(2)}, fmt.Sprintf("%d:COMPLETED %d:FAILED", id(0), id(1))},
	}
	for _, tt := range tests {
		if got := acct(tt.f); got != tt.want {
			t.Errorf("%s: %s\nwant %s", tt.name, got, tt.want)
		}
	}
	for _, q := range []string{"limit=0", "limit=x", "limit=10001", "limit=1&limit=2", "before=-1", "page=2"} {
		if code, out := callAs(t, tc, 0, http.MethodGet, "/v1/acct?"+q, nil); code != http.StatusBadRequest {
			t.Errorf("GET /v1/acct?%s: %d %s, want 400", q, code, out)
		}
	}
	// The numbers: elapsed, CPU time, peak memory, exit code.
	recs, _ := tc.client.Acct(context.Background(), api.AcctFilter{IDs: []uint64{id(2)}})
	if r := recs[0]; r.ExitCode != 2 || r.MaxRSSBytes != 4096 || r.TotalCPUUsec != 1500 || r.StartTime == nil ||
		r.CPUTimeS != r.ElapsedS*int64(r.CPUs) || len(r.Nodes) != 1 || r.Name != "j2" || r.User == "" {
		t.Errorf("record %+v", r)
	}
	// Cancelling the rest of the array adds its never-run tasks as one record.
	tc.client.Cancel(context.Background(), api.CancelRequest{IDs: []uint64{arr}})
	for _, task := range []uint64{arr + 2, arr + 3} {
		node.end(task, api.StateCancelled, 0)
	}
	if got, want := acct(api.AcctFilter{IDs: []uint64{arr}}), fmt.Sprintf("%d_0:COMPLETED %d_1:COMPLETED %d_1:CANCELLED %d_2:CANCELLED %d_3:CANCELLED", arr, arr, arr, arr, arr); got != want {
		t.Errorf("array after cancel: %s, want %s", got, want)
	}
}

func TestAcctIsPrivate(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	node := newFakeNode(tc, "n1", 8, 8<<30)
	node.register()
	owner := uint32(nobody)
	theirs, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: script("theirs"), OnBehalfOf: &owner})
	if err != nil {
		t.Skipf("needs root and a nobody account: %v", err)
	}
	mine := tc.submit(script("mine"))
	node.launchedIDs(2)
	node.end(theirs, api.StateCompleted, 0)
	node.end(mine, api.StateCompleted, 0)
	code, body := callAs(t, tc, nobody, http.MethodGet, "/v1/acct", nil)
	var recs []api.AcctRecord
	if code != 200 || json.Unmarshal(body, &recs) != nil || acctRefs(recs) != fmt.Sprintf("%d:COMPLETED", theirs) {
		t.Fatalf("nobody's history: %d %s", code, body)
	}
	code, body = callAs(t, tc, nobody, http.MethodGet, "/v1/acct?user=root", nil)
	if code != 403 || !strings.Contains(errorText(t, body), "only see your own") {
		t.Fatalf("nobody asking for root's: %d %s", code, body)
	}
	if recs, _ := tc.client.Acct(context.Background(), api.AcctFilter{}); len(recs) != 2 {
		t.Fatalf("root sees %d records, want both", len(recs))
	}
	for _, q := range []string{"state=DONE", "start=yesterday", "id=x", "color=red"} {
		if code, _ := callAs(t, tc, 0, http.MethodGet, "/v1/acct?"+q, nil); code != 400 {
			t.Errorf("?%s: %d, want 400", q, code)
		}
	}
	if code, _ := callAs(t, tc, 0, http.MethodGet, "/v1/acct?state=RQ&start="+url.QueryEscape(time.Now().Format(time.RFC3339)), nil); code != 200 {
		t.Errorf("RQ: %d", code)
	}
}

// Finished jobs past retention leave the state file and memory; jobs a
// pending dependency names stay.
func TestAcctRetentionPurge(t *testing.T) {
	tc := MustServer(t, eventsOnly, func(c *Config) { c.Pipeline.AcctRetention = time.Hour })
	node := newFakeNode(tc, "n1", 6, 8<<30)
	node.register()
	old := tc.submit(script("old"))
	kept := tc.submit(script("kept"))
	node.launchedIDs(2)
	node.end(old, api.StateCompleted, 0)
	node.end(kept, api.StateCompleted, 0)
	spec := dependent(t, "waits", fmt.Sprintf("afterany:%d", kept))
	spec.Hold = true
	waiting := tc.submit(spec)
	arr := tc.submit(arraySpec(t, "arr", "0-9"))
	node.launchedIDs(6)
	tc.client.Cancel(context.Background(), api.CancelRequest{IDs: []uint64{arr}})
	for i := range 6 {
		node.end(arr+uint64(i), api.StateCancelled, 0)
	}

	tc.srv.purgeFinished(time.Now()) // nothing is old yet
	if recs, _ := tc.srv.store.Jobs(); len(recs) != 9 {
		t.Fatalf("purged too early: %d records left", len(recs))
	}
	tc.srv.purgeFinished(time.Now().Add(2 * time.Hour))
	recs, _ := tc.srv.store.Jobs()
	arrays, _ := tc.srv.store.Arrays()
	var left []uint64
	for _, r := range recs {
		left = append(left, r.Job.ID)
	}
	if fmt.Sprint(left) != fmt.Sprint([]uint64{kept, waiting}) || len(arrays) != 0 {
		t.Fatalf("left %v and %d arrays, want %v and none", left, len(arrays), []uint64{kept, waiting})
	}
	if _, err := tc.client.Job(context.Background(), old); statusOf(err) != 404 {
		t.Fatalf("purged job still served: %v", err)
	}
	if got, _ := tc.client.Acct(context.Background(), api.AcctFilter{}); acctRefs(got) != fmt.Sprintf("%d:COMPLETED", kept) {
		t.Fatalf("history after purge: %s", acctRefs(got))
	}
	tc.Restart()
	if got, _ := tc.client.Acct(context.Background(), api.AcctFilter{}); acctRefs(got) != fmt.Sprintf("%d:COMPLETED", kept) {
		t.Fatalf("history after purge and restart: %s", acctRefs(got))
	}
}
