package sched

import (
	"testing"
	"time"
)

// TestStartFloorOnlyFromEasierJobs: on one node, job 3 waits and job 4
// asks for less of one thing than job 3 (memory, CPUs or time), so it
// starts now beside what makes job 3 wait; a floor taken from job 3's
// start would plan it later.
func TestStartFloorOnlyFromEasierJobs(t *testing.T) {
	node := MakeNode("n1").CPUs(8).Mem(16 * GiB).Obj()
	cases := map[string]*Harness{
		"less memory": NewHarness(t, node).Pending(
			MakeJob(1).CPUs(2).Mem(14*GiB).Time(2*time.Hour).Obj(),
			MakeJob(3).CPUs(1).Mem(4*GiB).Time(time.Hour).Obj(),
			MakeJob(4).CPUs(1).Mem(GiB).Time(time.Hour).Obj()),
		"fewer CPUs": NewHarness(t, node).Pending(
			MakeJob(1).CPUs(7).Mem(GiB).Time(2*time.Hour).Obj(),
			MakeJob(3).CPUs(2).Mem(GiB).Time(time.Hour).Obj(),
			MakeJob(4).CPUs(1).Mem(GiB).Time(time.Hour).Obj()),
		"shorter": NewHarness(t, node).
			Running(MakeRunning(100).OnRes("n1", Resources{CPUs: 6, MemBytes: GiB}).Ends(4*time.Hour).Obj()).
			Pending(
				MakeJob(1).CPUs(8).Mem(GiB).Time(time.Hour).Obj(),
				MakeJob(3).CPUs(2).Mem(GiB).Time(5*time.Hour).Obj(),
				MakeJob(4).CPUs(2).Mem(GiB).Time(time.Hour).Obj()),
	}
	for name, h := range cases {
		for _, only := range []bool{false, true} {
			v := h.Plan(Backfill{Mode: Conservative, StartsOnly: only})
			v.MustNotStart(3)
			v.MustStart(4, "n1")
			if t.Failed() {
				t.Fatalf("%s, StartsOnly %v:\n%s", name, only, v)
			}
		}
	}
}
