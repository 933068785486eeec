package ctld

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
)

func TestListingViews(t *testing.T) {
	tc := MustServer(t)
	for _, name := range []string{"a", "b", "c"} {
		id := tc.submit(script(name))
		// The two listings must see the same state: a cycle that gives
		// the job its reason between them would make them differ.
		tc.waitJob(id, "its first cycle's reason", func(j api.Job) bool { return j.Reason != api.ReasonNone && j.Reason != "" })
	}
	var full, brief []api.Job
	ctx := context.Background()
	if err := tc.client.Do(ctx, http.MethodGet, "/v1/jobs", nil, &full); err != nil {
		t.Fatal(err)
	}
	if err := tc.client.Do(ctx, http.MethodGet, "/v1/jobs?view=brief&user=root", nil, &brief); err != nil {
		t.Fatal(err)
	}
	if len(full) != 3 || len(brief) != 3 {
		t.Fatalf("full %d jobs, brief %d, want 3 each", len(full), len(brief))
	}
	for i, b := range brief {
		f := full[i]
		if b.ID != f.ID || b.Name != f.Name || b.User != f.User || b.Partition != f.Partition ||
			b.State != f.State || b.Reason != f.Reason || b.Priority != f.Priority || f.Priority == 0 || f.Spec.Script == "" {
			t.Errorf("brief %+v does not match full %+v", b, f)
		}
		if b.Spec.Script != "" || len(b.History) != 0 {
			t.Errorf("brief job %d carries its script or history", b.ID)
		}
	}
	var explicitFull []api.Job
	if err := tc.client.Do(ctx, http.MethodGet, "/v1/jobs?view=full", nil, &explicitFull); err != nil || len(explicitFull) != 3 || explicitFull[0].Spec.Script == "" {
		t.Fatalf("view=full: %d jobs, %v", len(explicitFull), err)
	}
	for _, bad := range []string{"view=short", "view=brief&view=full", "view="} {
		err := tc.client.Do(ctx, http.MethodGet, "/v1/jobs?"+bad, nil, nil)
		var se *api.StatusError
		if !errors.As(err, &se) || se.Code != http.StatusBadRequest || !strings.Contains(se.Message, "invalid view") {
			t.Errorf("%s: %v, want 400 invalid view", bad, err)
		}
	}
}

// A listing bigger than a chunk, with jobs in several states, arrives
// whole, in ID order, filtered as asked.
func TestListingAcrossChunks(t *testing.T) {
	tc := MustServer(t)
	s := tc.srv
	now := time.Now()
	const n = 3*listChunk + 7
	s.mu.Lock()
	for i := uint64(1); i <= n; i++ {
		st := api.StatePending
		if i%3 == 0 {
			st = api.StateCompleted
		}
		j := &job{rec: store.JobRecord{Job: api.Job{ID: i, Name: "j", User: "root", Partition: "batch", State: st, SubmitTime: now}}}
		s.q.track(j)
	}
	s.mu.Unlock()
	for _, tt := range []struct {
		query string
		want  func(id uint64) bool
	}{
		{"", func(id uint64) bool { return id%3 != 0 }},
		{"?all=1&view=brief", func(uint64) bool { return true }},
		{"?state=CD", func(id uint64) bool { return id%3 == 0 }},
	} {
		var got []api.Job
		if err := tc.client.Do(context.Background(), http.MethodGet, "/v1/jobs"+tt.query, nil, &got); err != nil {
			t.Fatal(err)
		}
		var want []uint64
		for id := uint64(1); id <= n; id++ {
			if tt.want(id) {
				want = append(want, id)
			}
		}
		ids := make([]uint64, len(got))
		for i, j := range got {
			ids[i] = j.ID
		}
		if !slices.Equal(ids, want) {
			t.Errorf("%q: %d jobs listed, want %d in ID order", tt.query, len(ids), len(want))
		}
	}
}

// view=summary (corral queue --json) keeps every field the queue's JSON
// promises and drops only the spec and the history.
func TestListingSummaryView(t *testing.T) {
	tc := MustServer(t)
	id := tc.submit(script("sum"))
	var raw []map[string]any
	if err := tc.client.Do(context.Background(), http.MethodGet, "/v1/jobs?view=summary", nil, &raw); err != nil {
		t.Fatal(err)
	}
	if len(raw) != 1 || uint64(raw[0]["id"].(float64)) != id {
		t.Fatalf("summary listing: %v", raw)
	}
	for _, k := range []string{"id", "name", "user", "partition", "state", "reason", "submit_time", "start_time",
		"end_time", "exit_code", "cpus", "mem_bytes", "nodes"} {
		if _, ok := raw[0][k]; !ok {
			t.Errorf("summary lacks %q", k)
		}
	}
	for _, k := range []string{"spec", "history"} {
		if _, ok := raw[0][k]; ok {
			t.Errorf("summary carries %q", k)
		}
	}
	var bad api.Error
	err := tc.client.Do(context.Background(), http.MethodGet, "/v1/jobs?view=everything", nil, &bad)
	if statusOf(err) != http.StatusBadRequest {
		t.Errorf("unknown view: %v", err)
	}
}

// ended_since leaves out the finished jobs that ended before it (squeue
// shows finished jobs only for MinJobAge), whether asked for by ID or
// with all=1; unfinished ones stay.
func TestListingEndedSince(t *testing.T) {
	tc := MustServer(t)
	done, waiting := tc.submit(script("done")), tc.submit(script("waiting"))
	if _, err := tc.client.Cancel(context.Background(), api.CancelRequest{IDs: []uint64{done}}); err != nil {
		t.Fatal(err)
	}
	ended := *tc.waitJob(done, "cancelled", inState(api.StateCancelled)).EndTime
	ctx := context.Background()
	for _, c := range []struct {
		filter api.JobFilter
		want   []uint64
	}{
		{api.JobFilter{All: true}, []uint64{done, waiting}},
		{api.JobFilter{All: true, EndedSince: ended.Add(-time.Second)}, []uint64{done, waiting}},
		{api.JobFilter{All: true, EndedSince: ended.Add(time.Second)}, []uint64{waiting}},
		{api.JobFilter{IDs: []uint64{done, waiting}, EndedSince: ended.Add(time.Second)}, []uint64{waiting}},
		{api.JobFilter{States: []api.JobState{api.StateCancelled}, EndedSince: ended.Add(time.Second)}, nil},
		{api.JobFilter{States: []api.JobState{api.StateCancelled}, EndedSince: ended.Add(-time.Second)}, []uint64{done}},
	} {
		var got []api.Job
		if err := tc.client.Do(ctx, http.MethodGet, api.JobsPath(c.filter, ""), nil, &got); err != nil {
			t.Fatalf("%s: %v", api.JobsPath(c.filter, ""), err)
		}
		var ids []uint64
		for _, j := range got {
			ids = append(ids, j.ID)
		}
		if !slices.Equal(ids, c.want) {
			t.Errorf("%s: %v, want %v", api.JobsPath(c.filter, ""), ids, c.want)
		}
	}
	err := tc.client.Do(ctx, http.MethodGet, "/v1/jobs?all=1&ended_since=yesterday", nil, nil)
	var se *api.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusBadRequest || !strings.Contains(se.Message, "invalid ended_since") {
		t.Errorf("ended_since=yesterday: %v, want 400", err)
	}
}
