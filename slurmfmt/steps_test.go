package slurmfmt

import (
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
	if _, unknown := NewStepLayout("%i %Q"); len(unknown) != 1 {
		t.Errorf("unknown %v, want [Q]", unknown)
	}
}
