package sim

import (
	"fmt"
	"strings"
	"testing"
)

// LimitsTrace is an array of five 1-CPU tasks limited to two at a time
// (%2, 10 s each), two singletons of one user and executable (15 s each)
// and a plain job, all submitted at once on 8 processors: only the limits
// hold anything back. Package ctld replays the same jobs through the
// controller and checks it starts them in the same rounds.
func LimitsTrace() *Trace {
	job := func(id, run, exe, array, arrayMax, singleton int64) Job {
		return Job{ID: id, Submit: 0, Wait: -1, Run: run, Procs: 1, AvgCPU: -1, Memory: -1, ReqProcs: 1,
			ReqTime: 100, ReqMemory: -1, Status: 1, User: 1, Group: 1, Executable: exe, Queue: -1,
			Partition: -1, PrecedingID: -1, ThinkTime: -1, Array: array, ArrayMax: arrayMax, Singleton: singleton}
	}
	tr := &Trace{Header: map[string]string{"MaxProcs": "8"}}
	for k := int64(0); k < 5; k++ {
		tr.Jobs = append(tr.Jobs, job(1+k, 10, 1, 1, 2, 0))
	}
	tr.Jobs = append(tr.Jobs, job(6, 15, 2, 0, 0, 1), job(7, 15, 2, 0, 0, 1), job(8, 5, 3, 0, 0, 0))
	return tr
}

func TestArrayLimitAndSingleton(t *testing.T) {
	tr := LimitsTrace()
	// Through the trace format and back, extension included.
	var lines []string
	for _, j := range tr.Jobs {
		lines = append(lines, j.Format())
	}
	back := MustTrace(t, append([]string{"; MaxProcs: 8"}, lines...)...)
	if fmt.Sprint(back.Jobs) != fmt.Sprint(tr.Jobs) {
		t.Fatalf("round trip:\n%v\n%v", back.Jobs, tr.Jobs)
	}
	want := map[int64]int64{1: 0, 2: 0, 3: 10, 4: 10, 5: 20, 6: 0, 7: 15, 8: 0}
	for _, p := range Policies {
		res := MustRun(t, back, Config{Policy: p})
		var got []string
		for _, r := range res.Records {
			if r.Start != want[r.ID] {
				got = append(got, fmt.Sprintf("job %d started at %d, want %d", r.ID, r.Start, want[r.ID]))
			}
		}
		if len(res.Records) != len(want) || len(got) > 0 {
			t.Fatalf("%s: %d records: %s", p, len(res.Records), strings.Join(got, "; "))
		}
	}
}
