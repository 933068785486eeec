package sim

import (
	"bytes"
	"compress/gzip"
	"reflect"
	"strings"
	"testing"
)

func TestParseSWF(t *testing.T) {
	tr := MustTrace(t,
		"; Version: 2.2",
		"; MaxNodes: 64",
		";   MaxProcs: 128  ",
		"; Note: uses the EASY scheduler",
		"",
		"    1        0 964980  97225   56     -1    -1   56 210000    -1  1   1   1  -1 -1 -1 -1 -1",
		"2 5170 -1 2 1 1.5 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1",
	)
	if tr.MaxProcs() != 128 || tr.Header["Version"] != "2.2" || len(tr.Jobs) != 2 {
		t.Fatalf("header %v, %d jobs", tr.Header, len(tr.Jobs))
	}
	want := Job{ID: 1, Submit: 0, Wait: 964980, Run: 97225, Procs: 56, AvgCPU: -1, Memory: -1, ReqProcs: 56,
		ReqTime: 210000, ReqMemory: -1, Status: 1, User: 1, Group: 1, Executable: -1, Queue: -1,
		Partition: -1, PrecedingID: -1, ThinkTime: -1}
	if tr.Jobs[0] != want {
		t.Fatalf("job 1 = %+v", tr.Jobs[0])
	}
	if tr.Jobs[1].AvgCPU != 1.5 || tr.Jobs[1].Queue != 0 {
		t.Fatalf("job 2 = %+v", tr.Jobs[1])
	}
	if got := MustTrace(t, "; MaxNodes: 32").MaxProcs(); got != 32 {
		t.Fatalf("MaxNodes fallback: %d", got)
	}
}

// The archive serves its logs gzipped: a .swf.gz reads as the trace in
// it, and a cut-off one is an error, not a shorter trace.
func TestParseSWFReadsGzip(t *testing.T) {
	text := "; MaxProcs: 8\n" + line(1, 0, 10, 2, 20, 1) + "\n" + line(2, 5, 10, 4, 20, 2) + "\n"
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	if _, err := w.Write([]byte(text)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ParseSWF(bytes.NewReader(z.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ParseSWF(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || len(got.Jobs) != 2 || got.MaxProcs() != 8 {
		t.Fatalf("gzipped: %+v, plain: %+v", got, want)
	}
	if _, err := ParseSWF(bytes.NewReader(z.Bytes()[:z.Len()-8])); err == nil {
		t.Fatal("a cut-off gzipped trace parsed without an error")
	}
}

func TestParseSWFErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"1 2 3", "line 1: want 18 fields, got 3"},
		{"; x\n1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1 7", "line 2: want 18 fields, got 19"},
		{"1 0 0 ten 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1", `line 1: field 4 (run time): "ten" is not a number`},
		{"1 0 0 10 1.5 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1", `line 1: field 5 (allocated processors): "1.5" is not a whole number`},
		{"1 0 0 10 1 -1 -1 1 NaN -1 1 1 1 -1 -1 -1 -1 -1", `line 1: field 9 (requested time): "NaN" is not a number`},
		{"1 0 0 1e300 1 -1 -1 1 1 -1 1 1 1 -1 -1 -1 -1 -1", `line 1: field 4 (run time): "1e300" is not a whole number`},
	} {
		_, err := ParseSWF(strings.NewReader(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

// FuzzParseSWF: any input either fails with an error naming a line or
// parses to jobs that format and parse back to the same jobs.
func FuzzParseSWF(f *testing.F) {
	for _, seed := range []string{
		"",
		"; MaxProcs: 100\n1 0 10 20 4 -1 -1 4 60 -1 1 3 3 -1 -1 -1 -1 -1\n",
		"    1        0 964980  97225   56     -1    -1   56 210000    -1  1   1   1  -1 -1 -1 -1 -1",
		"2 5170 -1 2 1 1.5 2e3 -1 -1 0.25 1 -1 -1 -1 0 -1 -1 -1\r\n;comment\n\n",
		"1 2 3",
		"; :\n;;;\n1 0 0 1 1 -1 -1 1 1 -1 1 1 1 -1 -1 -1 -1 -1 x",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		tr, err := ParseSWF(strings.NewReader(in))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("error without a line number: %v", err)
			}
			return
		}
		var lines []string
		for _, j := range tr.Jobs {
			lines = append(lines, j.Format())
		}
		back, err := ParseSWF(strings.NewReader(strings.Join(lines, "\n")))
		if err != nil {
			t.Fatalf("formatted jobs do not parse: %v", err)
		}
		if len(back.Jobs) != len(tr.Jobs) || (len(tr.Jobs) > 0 && !reflect.DeepEqual(back.Jobs, tr.Jobs)) {
			t.Fatalf("round trip changed the jobs:\n%+v\n%+v", tr.Jobs, back.Jobs)
		}
	})
}

// The archive's conventions: -1 is unknown, allocated and requested
// processors stand in for each other, a missing request is the run time,
// and a job cancelled before it ran (status 5, no run time) is dropped.
func TestArchiveConventions(t *testing.T) {
	j := func(id, run, procs, reqProcs, req, status int64) string {
		return Job{ID: id, Submit: id, Wait: -1, Run: run, Procs: procs, AvgCPU: -1, Memory: -1,
			ReqProcs: reqProcs, ReqTime: req, ReqMemory: -1, Status: status, User: 1, Group: 1,
			Executable: -1, Queue: -1, Partition: -1, PrecedingID: -1, ThinkTime: -1}.Format()
	}
	tr := MustTrace(t,
		"; MaxNodes: 8",
		j(1, 10, -1, 2, 20, 1),  // allocated unknown: the 2 requested
		j(2, 10, 3, -1, -1, 0),  // no request: 10 s; failed jobs still ran
		j(3, -1, -1, 4, 60, 5),  // cancelled in the queue: dropped
		j(4, 0, 2, 2, 60, 5),    // cancelled, run time 0: dropped
		j(5, 30, 1, 1, 60, 5),   // cancelled while running: replayed
		j(6, -1, 1, 1, 60, 1),   // no run time, not cancelled: skipped
		j(7, 10, -1, -1, 10, 1), // no processors at all: skipped
		"8 8.4 -1 9.6 1 -1 -1 1 20.2 -1 1 1 1 -1 -1 -1 -1 -1", // fractions: 8, 10, 20
	)
	res := MustRun(t, tr, Config{Policy: PolicyEASY})
	if res.Procs != 8 || res.Cancelled != 2 || res.Skipped != 2 || res.Metrics.Jobs != 4 {
		t.Fatalf("procs %d, cancelled %d, skipped %d, jobs %d; want 8, 2, 2, 4",
			res.Procs, res.Cancelled, res.Skipped, res.Metrics.Jobs)
	}
	got := map[int64]Record{}
	for _, r := range res.Records {
		got[r.ID] = r
	}
	for id, want := range map[int64]Record{
		1: {Procs: 2, Requested: 20, Submit: 1, Start: 1, End: 11},
		2: {Procs: 3, Requested: 10, Submit: 2, Start: 2, End: 12},
		5: {Procs: 1, Requested: 60, Submit: 5, Start: 5, End: 35},
		8: {Procs: 1, Requested: 20, Submit: 8, Start: 8, End: 18},
	} {
		r := got[id]
		if r.Procs != want.Procs || r.Requested != want.Requested || r.Submit != want.Submit ||
			r.Start != want.Start || r.End != want.End {
			t.Errorf("job %d: %+v, want %+v", id, r, want)
		}
	}
}

// A log of a machine with several partitions declares the whole machine
// first and the parts after it; the replay takes the whole.
func TestMaxProcsOfPartitionedMachine(t *testing.T) {
	for _, c := range []struct {
		header map[string]string
		want   int
	}{
		{map[string]string{"MaxProcs": "1664 (72, 1368, 224)", "MaxNodes": "184  ( 6,  171,   7)"}, 1664},
		{map[string]string{"MaxNodes": "184  ( 6,  171,   7)"}, 184},
		{map[string]string{"MaxProcs": "128"}, 128},
		{map[string]string{"MaxProcs": "(72)"}, 0},
		{map[string]string{}, 0},
	} {
		if got := (&Trace{Header: c.header}).MaxProcs(); got != c.want {
			t.Errorf("%v: MaxProcs %d, want %d", c.header, got, c.want)
		}
	}
}

// A log whose header gives only MaxNodes, with jobs wider than that in
// whole nodes of several processors, is a machine of MaxNodes times the
// smallest node size that holds its widest job; one whose jobs fit
// MaxNodes, or are not all whole nodes, has a processor per node.
func TestMaxProcsFromNodesOfSeveralProcessors(t *testing.T) {
	job := func(procs, req int64) Job { return Job{Procs: procs, ReqProcs: req} }
	for _, c := range []struct {
		name  string
		nodes string
		jobs  []Job
		want  int
	}{
		{"8-way nodes", "128", []Job{job(8, 8), job(1024, 1024), job(64, 64)}, 1024},
		{"multiples of 16, widest needs 8 per node", "128", []Job{job(16, 16), job(1024, 1024)}, 1024},
		{"requested when not allocated", "16", []Job{job(-1, 4), job(-1, 64)}, 64},
		{"jobs fit the nodes", "256", []Job{job(2, 2), job(256, 256)}, 256},
		{"not whole nodes", "64", []Job{job(3, 3), job(128, 128)}, 64},
		{"no jobs", "32", nil, 32},
	} {
		tr := &Trace{Header: map[string]string{"MaxNodes": c.nodes}, Jobs: c.jobs}
		if got := tr.MaxProcs(); got != c.want {
			t.Errorf("%s: MaxProcs %d, want %d", c.name, got, c.want)
		}
	}
	withProcs := &Trace{Header: map[string]string{"MaxNodes": "128", "MaxProcs": "512"}, Jobs: []Job{job(1024, 1024)}}
	if got := withProcs.MaxProcs(); got != 512 {
		t.Errorf("a header's MaxProcs is the machine: %d, want 512", got)
	}
}
