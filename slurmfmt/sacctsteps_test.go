package slurmfmt

import (
	"bytes"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// ranJob is a 2-node batch job that failed with exit code 3 after an
// hour, having run two srun steps.
func ranJob() AcctRow {
	code, uid := 3, uint32(0)
	j := running()
	j.ID, j.State, j.ExitCode, j.EndTime = 60, api.StateFailed, &code, at("2026-03-04T11:58:55")
	j.CPUTimeUsec, j.PeakMemBytes = 2_500_000, 3<<20
	j.Spec.Dependency = nil
	steps := j.PartSteps()
	steps = append(steps,
		api.Step{JobID: 60, StepID: 0, Name: "hostname", State: api.StateCompleted, Nodes: []string{"dev1", "dev2"},
			Tasks: 4, TasksPerNode: []int{2, 2}, CPUsPerTask: 1, Start: *at("2026-03-04T11:00:00"), End: at("2026-03-04T11:00:01"),
			CPUTimeUsec: 12_000, PeakMemBytes: 8 << 20},
		api.Step{JobID: 60, StepID: 1, Name: "python", State: api.StateRunning, Nodes: []string{"dev2"},
			Tasks: 1, TasksPerNode: []int{1}, CPUsPerTask: 2, Start: *at("2026-03-04T11:58:00")},
	)
	rec := api.AcctRecord{JobID: 60, Name: "train", Partition: "gpu", Account: "ml", User: "alice", UID: 1000,
		State: j.State, ExitCode: 3, SubmitTime: j.SubmitTime, StartTime: j.StartTime, EndTime: *j.EndTime,
		CPUs: 4, NodeCount: 2, ElapsedS: 3600, Nodes: j.Nodes, Steps: steps, MaxRSSBytes: j.PeakMemBytes, CancelledBy: &uid}
	return AcctRow{Rec: rec, Job: j}
}

// TestAcctStepLines checks the lines sacct prints for a job's steps
// (sacct(1); print.c fills only the JOBSTEP fields on them): the batch
// step on the first node with the script's exit, the extern step on
// every node COMPLETED, srun's steps with their own tasks and CPUs, and
// the job's own fields (Partition, User) empty on step lines.
func TestAcctStepLines(t *testing.T) {
	env := &Env{Now: testNow}
	l, err := ParseAcctFormat("JobID,JobIDRaw,JobName,Partition,User,State,ExitCode,NNodes,NTasks,AllocCPUS,NodeList,MaxRSS,Elapsed,End,DerivedExitCode")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteAcct(&b, l, WithSteps([]AcctRow{ranJob()}), AcctStyle{Parsable: true, NoEnding: true, NoHeader: true}, env); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"60|60|train|gpu|alice|FAILED|3:0|2||8|dev[1-2]||01:00:00|2026-03-04T11:58:55|0:0\n" +
		"60.batch|60.batch|batch|||FAILED|3:0|1|1|4|dev1|3M|01:00:00|2026-03-04T11:58:55|\n" +
		"60.extern|60.extern|extern|||COMPLETED|0:0|2|2|8|dev[1-2]||01:00:00|2026-03-04T11:58:55|\n" +
		"60.0|60.0|hostname|||COMPLETED|0:0|2|4|4|dev[1-2]|8M|00:00:01|2026-03-04T11:00:01|\n" +
		"60.1|60.1|python|||RUNNING|0:0|1|1|2|dev2||00:02:00|Unknown|\n"
	if b.String() != want {
		t.Errorf("step lines:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestAcctCancelledBy(t *testing.T) {
	r, uid := ranJob(), uint32(1000)
	r.Rec.State = api.StateCancelled
	l, _ := ParseAcctFormat("State,State%20")
	var b bytes.Buffer
	if err := WriteAcct(&b, l, []AcctRow{r}, AcctStyle{NoHeader: true}, &Env{Now: testNow}); err != nil {
		t.Fatal(err)
	}
	// sacct cuts the 10-wide default column as it cuts any value.
	if want := "CANCELLED+       CANCELLED by 0 \n"; b.String() != want {
		t.Errorf("cancelled: %q, want %q", b.String(), want)
	}
	step := api.Step{JobID: 60, StepID: 0, State: api.StateCancelled, CancelledBy: &uid}
	b.Reset()
	if err := WriteAcct(&b, l, []AcctRow{{Rec: r.Rec, Step: &step}}, AcctStyle{NoHeader: true}, &Env{Now: testNow}); err != nil {
		t.Fatal(err)
	}
	if want := "CANCELLED+    CANCELLED by 1000 \n"; b.String() != want {
		t.Errorf("step cancelled: %q, want %q", b.String(), want)
	}
	r.Rec.CancelledBy = nil
	b.Reset()
	WriteAcct(&b, l, []AcctRow{r}, AcctStyle{NoHeader: true}, &Env{Now: testNow})
	if want := " CANCELLED            CANCELLED \n"; b.String() != want {
		t.Errorf("cancelled by no one: %q, want %q", b.String(), want)
	}
}

func TestDerivedExitCode(t *testing.T) {
	r := ranJob()
	for _, tc := range []struct {
		codes [][2]int // exit code, signal of steps 0 and 1
		want  string
	}{
		{[][2]int{{0, 0}, {0, 0}}, "0:0"},
		{[][2]int{{0, 9}, {0, 0}}, "0:9"},
		{[][2]int{{0, 9}, {2, 0}}, "2:0"},
		{[][2]int{{1, 0}, {4, 0}}, "4:0"},
	} {
		for k, c := range tc.codes {
			st := &r.Rec.Steps[2+k]
			st.ExitCode, st.Signal, st.State = c[0], c[1], api.StateFailed
		}
		if got := derivedExitCode(&r); got != tc.want {
			t.Errorf("steps %v: DerivedExitCode %s, want %s", tc.codes, got, tc.want)
		}
	}
}
