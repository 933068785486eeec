package ctld

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
)

// bufferedAcct is how GET /v1/acct answered before it streamed: every
// record in one slice, filtered, sorted, compacted, then marshalled. The
// streamed answer must be the same bytes.
func bufferedAcct(s *Server, f api.AcctFilter, caller peer) []byte {
	out := []api.AcctRecord{}
	s.mu.RLock()
	add := func(recs ...api.AcctRecord) { out = append(out, recs...) }
	addArray := func(a *arrayJob) {
		for pos := 0; pos < a.count; pos++ {
			if j := s.q.jobs[a.base+uint64(pos)]; j != nil {
				add(acctRecords(&j.rec.Job)...)
			}
		}
		if a.rem != nil && a.rem.Job.State.Terminal() {
			add(remRecord(a))
		}
	}
	switch {
	case len(f.IDs)+len(f.Tasks) > 0:
		for _, id := range f.IDs {
			if a := s.q.arrays[id]; a != nil {
				addArray(a)
			} else if j := s.q.jobs[id]; j != nil {
				add(acctRecords(&j.rec.Job)...)
			}
		}
		for _, t := range f.Tasks {
			if a := s.q.arrays[t.JobID]; a != nil {
				if id, ok := a.idOf(t.Task); ok && s.q.jobs[id] != nil {
					add(acctRecords(&s.q.jobs[id].rec.Job)...)
				}
			}
		}
	default:
		for _, j := range s.q.jobs {
			add(acctRecords(&j.rec.Job)...)
		}
		for _, a := range s.q.arrays {
			if a.rem != nil && a.rem.Job.State.Terminal() {
				add(remRecord(a))
			}
		}
	}
	s.mu.RUnlock()
	out = slices.DeleteFunc(out, func(r api.AcctRecord) bool { return !acctMatches(&r, &f, caller) })
	slices.SortFunc(out, func(a, b api.AcctRecord) int {
		if c := compareIDs(a.JobID, b.JobID); c != 0 {
			return c
		}
		return a.Run - b.Run
	})
	out = slices.CompactFunc(out, func(a, b api.AcctRecord) bool {
		return a.JobID == b.JobID && a.Run == b.Run && a.ArrayTasks == b.ArrayTasks
	})
	body, _ := json.Marshal(out)
	return append(body, '\n')
}

// addFinished puts n finished jobs, from ID first, straight into the
// controller's memory: every third was requeued once (two records), users
// alternate between root and nobody.
func addFinished(s *Server, first uint64, n int) {
	now := time.Now().Add(-time.Hour)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i < n; i++ {
		id := first + uint64(i)
		start, end := now.Add(time.Duration(i)*time.Millisecond), now.Add(time.Duration(i)*time.Millisecond+time.Minute)
		code := i % 3
		j := api.Job{ID: id, Name: "hist", User: "root", Partition: "batch", State: api.StateCompleted,
			SubmitTime: now, StartTime: &start, EndTime: &end, ExitCode: &code, CPUs: 2, Nodes: []string{"n1"}}
		if i%2 == 1 {
			j.User, j.UID, j.State = "nobody", nobody, api.StateFailed
		}
		if i%3 == 0 {
			zero := 0
			j.Runs = []api.JobRun{{State: api.StateRequeued, StartTime: start, EndTime: start.Add(time.Second), ExitCode: &zero, Nodes: []string{"n2"}}}
		}
		s.q.jobs[id] = &job{rec: store.JobRecord{Job: j}}
	}
}

// The streamed history is byte for byte what the buffered one was, for
// every filter shape and caller, across chunks, with an array's never-run
// remainder and a job named twice.
func TestAcctStreamSameBytes(t *testing.T) {
	tc := MustServer(t, eventsOnly)
	s := tc.srv
	spec := arraySpec(t, "arr", "0-9")
	spec.Hold = true
	arr := tc.submit(spec)
	if _, err := tc.client.Cancel(context.Background(), api.CancelRequest{IDs: []uint64{arr}}); err != nil {
		t.Fatal(err)
	}
	addFinished(s, 1000, 3*listChunk+5)
	mid := uint64(1000 + listChunk)
	for _, tt := range []struct {
		name   string
		query  string
		f      api.AcctFilter
		caller peer
	}{
		{"everything", "", api.AcctFilter{}, peer{}},
		{"nobody's own", "", api.AcctFilter{}, peer{UID: nobody}},
		{"state", "?state=F", api.AcctFilter{States: []api.JobState{api.StateFailed}}, peer{}},
		{"requeued runs", "?state=RQ", api.AcctFilter{States: []api.JobState{api.StateRequeued}}, peer{}},
		{"ids twice", "?id=1000,1003,1000," + jobIDString(mid), api.AcctFilter{IDs: []uint64{1000, 1003, 1000, mid}}, peer{}},
		{"array and a task", "?id=" + jobIDString(arr) + "," + jobIDString(arr) + "_3", api.AcctFilter{IDs: []uint64{arr}, Tasks: []api.TaskRef{{JobID: arr, Task: 3}}}, peer{}},
		{"nothing", "?id=999999", api.AcctFilter{IDs: []uint64{999999}}, peer{}},
	} {
		rec := httptest.NewRecorder()
		acctEndpoint{s}.history(rec, httptest.NewRequest(http.MethodGet, "/v1/acct"+tt.query, nil), tt.caller)
		want := bufferedAcct(s, tt.f, tt.caller)
		if rec.Code != 200 || rec.Body.String() != string(want) {
			t.Errorf("%s: %d, %d bytes, want the buffered answer's %d bytes:\n%.300s\nwant\n%.300s", tt.name, rec.Code, rec.Body.Len(), len(want), rec.Body.String(), want)
		}
	}
}

func jobIDString(id uint64) string { return strconv.FormatUint(id, 10) }

// heapSampler is a ResponseWriter that discards the body and records the
// largest live heap (after a collection) seen at any write: each flush of
// the streamed answer's 256 KiB buffer, the buffered answer's one write.
type heapSampler struct {
	httptest.ResponseRecorder
	n    int64
	peak uint64
}

func (h *heapSampler) Write(b []byte) (int, error) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.peak = max(h.peak, ms.HeapAlloc)
	h.n += int64(len(b))
	return len(b), nil
}

// BenchmarkAcct50k answers root's whole history of 50,000 jobs (66,667
// records, 23 MB of JSON), streamed and, for comparison, buffered as it
// was; heap-MB is the largest live heap above the 50,000 jobs themselves
// while answering (for the buffered answer a lower bound: the slice of
// records is garbage by its one write).
func BenchmarkAcct50k(b *testing.B) {
	tc := MustServer(b, eventsOnly)
	s := tc.srv
	addFinished(s, 1, 50_000)
	for _, bb := range []struct {
		name  string
		serve func(h *heapSampler)
	}{
		{"streamed", func(h *heapSampler) {
			acctEndpoint{s}.history(h, httptest.NewRequest(http.MethodGet, "/v1/acct", nil), peer{})
		}},
		{"buffered", func(h *heapSampler) {
			h.Write(bufferedAcct(s, api.AcctFilter{}, peer{}))
		}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			var peak uint64
			var n int64
			for b.Loop() {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				h := &heapSampler{}
				bb.serve(h)
				peak, n = max(peak, h.peak-min(h.peak, ms.HeapAlloc)), h.n
			}
			b.ReportMetric(float64(peak)/(1<<20), "heap-MB")
			b.ReportMetric(float64(n)/(1<<20), "body-MB")
		})
	}
}
