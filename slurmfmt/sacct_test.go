package slurmfmt

import (
	"bytes"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// finished is a history record of a job that ran 1h01m05s on two nodes.
func finished() AcctRow {
	task := 3
	return AcctRow{Rec: api.AcctRecord{
		JobID: 50, ArrayJobID: 47, ArrayTaskID: &task, Name: "lr=0.1 run:v2", Partition: "gpu", Account: "ml",
		User: "alice", UID: 1000, State: api.StateCancelled, ExitCode: 0, Signal: 15,
		SubmitTime: *at("2026-03-04T10:00:00"), StartTime: at("2026-03-04T10:58:55"), EndTime: *at("2026-03-04T12:00:00"),
		ElapsedS: 3665, CPUs: 4, NodeCount: 2, CPUTimeS: 3665 * 8, TotalCPUUsec: 61_500_000, MaxRSSBytes: 1536 << 20,
		Nodes: []string{"dev1", "dev2"},
	}, Job: running()}
}

func TestAcctFields(t *testing.T) {
	env := &Env{Now: testNow, Group: func(uint32) string { return "users" }}
	pend := AcctRowOf(pending(), testNow)
	bare := finished()
	bare.Job = nil
	for _, tc := range []struct{ field, fin, pend, bare string }{
		{"Account", "ml", "", "ml"},
		{"AllocCPUS", "8", "0", "8"},
		{"AllocNodes", "2", "0", "2"},
		{"AllocTRES", "billing=8,cpu=8,mem=6G,node=2", "", "billing=8,cpu=8,node=2"},
		{"ReqTRES", "billing=8,cpu=8,mem=6G,node=2", "billing=1,cpu=1,mem=1536M,node=1", "billing=8,cpu=8,node=2"},
		{"AveRSS", "", "", ""}, // a step's field
		{"MaxRSS", "", "", ""},
		{"CPUTime", "08:08:40", "00:00:00", "08:08:40"},
		{"CPUTimeRAW", "29320", "0", "29320"},
		{"DerivedExitCode", "0:0", "0:0", "0:0"},
		{"Elapsed", "01:01:05", "00:00:00", "01:01:05"},
		{"ElapsedRaw", "3665", "0", "3665"},
		{"Eligible", "2026-03-04T10:00:00", "2026-03-04T11:59:00", "2026-03-04T10:00:00"},
		{"End", "2026-03-04T12:00:00", "Unknown", "2026-03-04T12:00:00"},
		{"ExitCode", "0:15", "0:0", "0:15"},
		{"Group", "users", "users", ""},
		{"JobID", "47_3", "47_3", "47_3"},
		{"JobIDRaw", "50", "50", "50"},
		{"JobName", "lr=0.1 run:v2", "lr=0.1 run:v2", "lr=0.1 run:v2"},
		{"NCPUS", "8", "0", "8"},
		{"NNodes", "2", "1", "2"},
		{"NodeList", "dev[1-2]", "None assigned", "dev[1-2]"},
		{"Partition", "gpu", "debug", "gpu"},
		{"Reason", "None", "Priority", "None"},
		{"ReqCPUS", "8", "1", ""},
		{"ReqMem", "3G", "1536M", ""},
		{"Start", "2026-03-04T10:58:55", "Unknown", "2026-03-04T10:58:55"},
		{"State", "CANCELLED", "PENDING", "CANCELLED"},
		{"Submit", "2026-03-04T10:00:00", "2026-03-04T11:59:00", "2026-03-04T10:00:00"},
		{"Timelimit", "02:00:00", "UNLIMITED", ""},
		{"TimelimitRaw", "120", "UNLIMITED", ""},
		{"TotalCPU", "01:01.500", "00:00.000", "01:01.500"},
		{"UID", "1000", "1001", "1000"},
		{"User", "alice", "bob", "alice"},
		{"WorkDir", "/home/alice", "", ""},
	} {
		l, err := ParseAcctFormat(strings.ToLower(tc.field))
		if err != nil {
			t.Errorf("%s: %v", tc.field, err)
			continue
		}
		f := l.Columns[0].field
		fin := finished()
		for _, c := range []struct {
			row  *AcctRow
			want string
			what string
		}{{&fin, tc.fin, "finished"}, {&pend, tc.pend, "pending"}, {&bare, tc.bare, "without a job record"}} {
			if got := f.value(c.row, env); got != c.want {
				t.Errorf("%s of the %s row = %q, want %q", tc.field, c.what, got, c.want)
			}
		}
	}
}

func TestWriteAcct(t *testing.T) {
	env := &Env{Now: testNow}
	rows := []AcctRow{finished(), AcctRowOf(pending(), testNow)}
	l, err := ParseAcctFormat(SacctDefault)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteAcct(&b, l, rows, AcctStyle{}, env); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n" +
		"------------ ---------- ---------- ---------- ---------- ---------- -------- \n" +
		"47_3         lr=0.1 ru+        gpu         ml          8  CANCELLED     0:15 \n" +
		"47_3         lr=0.1 ru+      debug                     0    PENDING      0:0 \n"
	if b.String() != want {
		t.Errorf("default sacct:\n%s\nwant:\n%s", b.String(), want)
	}
	l, _ = ParseAcctFormat("JobIDRaw,State,JobName%-5")
	for _, tc := range []struct {
		st   AcctStyle
		want string
	}{
		{AcctStyle{Parsable: true, NoEnding: true}, "JobIDRaw|State|JobName\n50|CANCELLED|lr=0.1 run:v2\n50|PENDING|lr=0.1 run:v2\n"},
		{AcctStyle{Parsable: true, NoHeader: true}, "50|CANCELLED|lr=0.1 run:v2|\n50|PENDING|lr=0.1 run:v2|\n"},
		{AcctStyle{Parsable: true, NoEnding: true, NoHeader: true, Delimiter: ","}, "50,CANCELLED,lr=0.1 run:v2\n50,PENDING,lr=0.1 run:v2\n"},
		{AcctStyle{NoHeader: true}, "50            CANCELLED lr=0+ \n50              PENDING lr=0+ \n"},
	} {
		b.Reset()
		if err := WriteAcct(&b, l, rows, tc.st, env); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("%+v:\n%q\nwant\n%q", tc.st, b.String(), tc.want)
		}
	}
}

func TestParseAcctFormatErrors(t *testing.T) {
	for _, bad := range []string{"Bogus", "JobID%x", "JobID%0", ""} {
		if _, err := ParseAcctFormat(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
	l, err := ParseAcctFormat("jobid%20,STATE")
	if err != nil || l.Columns[0].width != 20 || l.Columns[1].width != 10 || l.NeedJob {
		t.Errorf("jobid%%20,STATE: %+v %v", l, err)
	}
	for _, name := range AcctFieldNames() {
		if _, err := ParseAcctFormat(name); err != nil {
			t.Errorf("listed field %s: %v", name, err)
		}
	}
}
