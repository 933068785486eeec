package slurmfmt

import (
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

func TestStepLayout(t *testing.T) {
	j := running()
	step := &api.Step{JobID: 42, StepID: 0, Name: "hostname", State: api.StateRunning, Nodes: []string{"dev1", "dev2"},
		Tasks: 4, Start: *at("2026-03-04T11:58:00")}
	l, unknown := NewStepLayout(SqueueSteps)
	if len(unknown) > 0 {
		t.Fatalf("unknown step fields %v", unknown)
	}
	env := &Env{Now: testNow}
	row := &StepRow{Step: step, Job: j}
	if got, want := l.Header(), "         STEPID     NAME PARTITION     USER      TIME NODELIST"; got != want {
		t.Errorf("header %q, want %q", got, want)
	}
	if got, want := l.Row(row, env), "           42.0 hostname       gpu    alice      2:00 dev[1-2]"; got != want {
		t.Errorf("row %q, want %q", got, want)
	}
	l, _ = NewStepLayout("%A|%l|%S|%T|%U")
	if got, want := l.Row(row, env), "4|2:00:00|2026-03-04T11:58:00|RUNNING|1000"; got != want {
		t.Errorf("row %q, want %q", got, want)
	}
	var b strings.Builder
	if err := StepRecord(&b, row, env); err != nil {
		t.Fatal(err)
	}
	want := "StepId=42.0 UserId=1000 StartTime=2026-03-04T11:58:00 TimeLimit=02:00:00\n" +
		"   State=RUNNING Partition=gpu NodeList=dev[1-2]\n" +
		"   Nodes=2 CPUs=8 Tasks=4 Name=hostname Network=(null)\n" +
		"   TRES=cpu=8,node=2\n" +
		"   ResvPorts=(null)\n" +
		"   CPUFreqReq=Default Dist=Block\n\n"
	if b.String() != want {
		t.Errorf("show step:\n%s\nwant:\n%s", b.String(), want)
	}
	if _, unknown := NewStepLayout("%i %Q"); len(unknown) != 1 {
		t.Errorf("unknown %v, want [Q]", unknown)
	}
}
