package sched

import (
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/gpu"
)

// share is amount hundredths of device dev.
func share(dev int, amount gpu.Hundredths) gpu.Share { return gpu.Share{Device: dev, Amount: amount} }

// Seed 000 in the planner: one GPU worth 2 fGPU, three 1-fGPU jobs: two
// start on the device, the third waits for Resources until one ends.
func TestSeed000OneGPUTwoFGPU(t *testing.T) {
	for _, mode := range allModes {
		t.Run(string(mode), func(t *testing.T) {
			h := NewHarness(t, MakeNode("n1").CPUs(8).Mem(8*GiB).GPUs(200, mockA100(0, false)).Obj())
			for id := uint64(1); id <= 3; id++ {
				h.Pending(MakeJob(id).FGPU(100).Time(time.Hour).Prio(int64(10 - id)).UID(1000).Obj())
			}
			v := h.Plan(Backfill{Mode: mode})
			v.MustStartOnDevices(1, "n1", "0:1")
			v.MustStartOnDevices(2, "n1", "0:1")
			v.MustWait(3, api.ReasonResources, time.Hour)
		})
	}
}

// Acceptance 3: four 0.5-GPU jobs on two GPUs fill both devices (best
// fit: the second half joins the first); a 1-GPU job then waits until one
// device is whole again, which is later than the moment half of each is
// free, and the planner says when and where.
func TestPackingFillsDevicesAndWholeGPUWaits(t *testing.T) {
	node := MakeNode("n1").CPUs(8).Mem(8*GiB).GPUs(100, a100s(2)...).Obj()
	h := NewHarness(t, node)
	for id := uint64(1); id <= 4; id++ {
		h.Pending(MakeJob(id).FGPU(50).Time(time.Hour).Prio(int64(10 - id)).UID(1000).Obj())
	}
	v := h.Plan(Backfill{})
	v.MustStartOnDevices(1, "n1", "0:0.5")
	v.MustStartOnDevices(2, "n1", "0:0.5")
	v.MustStartOnDevices(3, "n1", "1:0.5")
	v.MustStartOnDevices(4, "n1", "1:0.5")

	// The four run: device 0's halves end at 30m and 2h, device 1's at 1h
	// and 90m.
	ends := map[uint64]time.Duration{1: 30 * time.Minute, 2: 2 * time.Hour, 3: time.Hour, 4: 90 * time.Minute}
	h2 := NewHarness(t, node)
	for _, st := range v.Starts {
		h2.Running(MakeRunning(st.JobID).UID(1000).OnShares("n1", 1, st.GPUs[0]...).Ends(ends[st.JobID]).Obj())
	}
	for _, whole := range []Pending{
		MakeJob(10).FGPU(100).Time(time.Hour).UID(1000).Obj(),
		MakeJob(10).WholeGPUs(1).Time(time.Hour).UID(2000).Obj(),
	} {
		h3 := *h2
		h3.Snap.Pending = []Pending{whole}
		for _, mode := range allModes {
			w := h3.Plan(Backfill{Mode: mode})
			// At 1h half of each device is free: one GPU's worth in
			// total, but on no single device until 90m.
			e := w.MustWait(10, api.ReasonResources, 90*time.Minute)
			if len(e.GPUs) != 1 || amountsOf(e.GPUs[0]) != "1:1" {
				t.Fatalf("%s: planned shares %v, want device 1 whole", mode, e.GPUs)
			}
		}
	}
}

// An MPS device serves one user at a time: another user's fraction waits
// for the device (or takes another), the same user's joins.
func TestMPSFractionsDoNotMixUsers(t *testing.T) {
	run := MakeRunning(100).UID(1000).OnShares("n1", 1, share(0, 50)).Ends(time.Hour).Obj()
	for _, tc := range []struct {
		uid     uint32
		devices int
		start   bool
		shares  string
	}{
		{1000, 1, true, "0:0.5"},
		{1001, 1, false, ""},
		{1001, 2, true, "1:0.5"},
	} {
		h := NewHarness(t, MakeNode("n1").CPUs(4).GPUs(100, a100s(tc.devices)...).Obj()).Running(run).
			Pending(MakeJob(1).FGPU(50).Time(time.Hour).UID(tc.uid).Obj())
		v := h.Plan(Backfill{})
		if tc.start {
			v.MustStartOnDevices(1, "n1", tc.shares)
		} else {
			v.MustWait(1, api.ReasonResources, time.Hour)
		}
	}
}

// A fraction on a MIG device is served by the smallest profile that
// holds it and charged what the profile takes of the card.
func TestMIGDeviceGetsProfile(t *testing.T) {
	h := NewHarness(t, MakeNode("n1").CPUs(4).GPUs(100, mockA100(0, true)).Obj()).
		Pending(MakeJob(1).FGPU(50).Time(time.Hour).Prio(3).Obj(),
			MakeJob(2).FGPU(25).Time(time.Hour).Prio(2).Obj(),
			MakeJob(3).FGPU(50).Time(time.Hour).Prio(1).Obj())
	v := h.Plan(Backfill{})
	v.MustStartOnDevices(1, "n1", "0:0.57(4g.20gb)")
	v.MustStartOnDevices(2, "n1", "0:0.28(2g.10gb)")
	// 0.57 + 0.28 leaves 0.15: no room for another 4g.20gb until job 1 ends.
	v.MustWait(3, api.ReasonResources, time.Hour)
}

// Whole GPUs take the device's worth on each node; a type picks models.
func TestWholeGPUsAndTypes(t *testing.T) {
	h := NewHarness(t,
		MakeNode("a").CPUs(4).GPUs(200, a100s(2)...).Obj(),
		MakeNode("h").CPUs(4).GPUs(100, mockH100(0), mockH100(1)).Obj(),
	).Pending(
		MakeJob(1).WholeGPUs(1).GPUType("h100").Time(time.Hour).Prio(4).Obj(),
		MakeJob(2).WholeGPUs(2).GPUType("A100").Time(time.Hour).Prio(3).Obj(),
		MakeJob(3).WholeGPUs(1).GPUType("v100").Time(time.Hour).Prio(2).Obj(),
		MakeJob(4).FGPU(75).Time(time.Hour).Prio(1).Obj(),
	)
	v := h.Plan(Backfill{})
	v.MustStartOnDevices(1, "h", "0:1")
	v.MustStartOnDevices(2, "a", "0:2 1:2")
	v.MustWait(3, api.ReasonResources, -1) // no such model anywhere
	v.MustStartOnDevices(4, "h", "1:0.75") // the A100s are taken whole
	if s := (FirstFit{}).Plan(h.Snap); len(s.Starts) != 3 {
		t.Fatalf("first fit starts %+v", s.Starts)
	}
}

// A job needing two nodes' GPUs starts when both have a device free over
// its whole run, found through the per-node windows.
func TestMultiNodeGPUWindows(t *testing.T) {
	h := NewHarness(t,
		MakeNode("n1").CPUs(4).GPUs(100, a100s(1)...).Obj(),
		MakeNode("n2").CPUs(4).GPUs(100, a100s(1)...).Obj(),
	).Running(
		MakeRunning(100).OnShares("n1", 1, share(0, 100)).Ends(time.Hour).Obj(),
		MakeRunning(101).UID(7).OnShares("n2", 1, share(0, 50)).Ends(2*time.Hour).Obj(),
	).Pending(
		MakeJob(1).Nodes(2).WholeGPUs(1).Time(time.Hour).Prio(5).Obj(),
		// Uid 7 may join its own half on n2 at once, but n1's device is
		// taken whole for the first hour.
		MakeJob(2).Nodes(2).FGPU(50).Time(30*time.Minute).Prio(4).UID(7).Obj(),
	)
	v := h.Plan(Backfill{})
	v.MustWait(1, api.ReasonResources, 2*time.Hour)
	// Job 2 starts when n1's device frees and ends before job 1 at 2h.
	e := v.MustWait(2, api.ReasonPriority, time.Hour)
	if len(e.GPUs) != 2 || amountsOf(e.GPUs[0]) != "0:0.5" || amountsOf(e.GPUs[1]) != "0:0.5" {
		t.Fatalf("job 2 planned shares %v", e.GPUs)
	}
}

// Jobs without GPUs ignore devices; GPU jobs never go to nodes without.
func TestGPUJobsAndPlainNodes(t *testing.T) {
	h := NewHarness(t,
		MakeNode("cpu").CPUs(4).Obj(),
		MakeNode("gpu").CPUs(1).GPUs(100, a100s(1)...).Obj(),
	).Pending(
		MakeJob(1).CPUs(1).FGPU(10).Time(time.Hour).Prio(2).Obj(),
		MakeJob(2).CPUs(2).Time(time.Hour).Prio(1).Obj(),
	)
	v := h.Plan(Backfill{})
	v.MustStartOnDevices(1, "gpu", "0:0.1")
	v.MustStart(2, "cpu")
}
