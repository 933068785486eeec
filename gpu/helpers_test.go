package gpu_test

import (
	"fmt"
	"testing"

	"github.com/corral-hpc/corral/gpu"
)

// A100-40GB numbers as NVML reports them (nvidia-smi -q, nvidia-smi mig
// -lgip): 40960 MiB, 108 SMs, and the MIG profiles with their memory in
// MiB. The same numbers are in go-nvml's mock (pkg/nvml/mock/gpus/a100.go);
// package gpu/discover tests against that mock itself.
const a100Bytes = 40960 * gpu.MiB

func a100(index int) gpu.Device {
	return gpu.Device{
		Index:       index,
		UUID:        fmt.Sprintf("GPU-a100-%d", index),
		Name:        "NVIDIA A100-SXM4-40GB",
		MemoryBytes: a100Bytes,
		SMs:         108,
		MIGCapable:  true,
	}
}

// a100MIG is a100 with MIG mode on and its profiles listed.
func a100MIG(index int) gpu.Device {
	d := a100(index)
	d.MIGEnabled, d.MIGSlices = true, 7
	for _, p := range []struct {
		id, slices, sms int
		mib             int64
		variant         string
		max             int
	}{
		{0, 1, 14, 4864, "", 7},
		{1, 2, 28, 9856, "", 3},
		{2, 3, 42, 19968, "", 2},
		{3, 4, 56, 19968, "", 1},
		{4, 7, 98, 40192, "", 1},
		{7, 1, 14, 4864, "+me", 1},
		{9, 1, 14, 9856, "", 4},
	} {
		e := gpu.MIGMemEighths(p.mib*gpu.MiB, a100Bytes)
		d.MIG = append(d.MIG, gpu.MIGProfile{
			ID: p.id, Name: gpu.MIGName(p.slices, e, a100Bytes, p.variant), Slices: p.slices, SMs: p.sms,
			MemoryBytes: p.mib * gpu.MiB, MemEighths: e, Variant: p.variant, Max: p.max, Free: p.max,
		})
	}
	return d
}

// devices makes n plain A100s with indices 0..n-1.
func devices(n int) []gpu.Device {
	out := make([]gpu.Device, n)
	for i := range out {
		out[i] = a100(i)
	}
	return out
}

// MustFGPU parses an fGPU amount or fails the test.
func MustFGPU(t testing.TB, s string) gpu.Hundredths {
	t.Helper()
	h, err := gpu.ParseFGPU(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// node is one node's devices and what running jobs hold, the state the
// controller would keep, for tests that place and end jobs in sequence.
type node struct {
	t      testing.TB
	devs   []gpu.Device
	perGPU gpu.Hundredths
	held   map[int][]gpu.Holding // job -> its holdings
	nextID int
}

func newNode(t testing.TB, perGPU gpu.Hundredths, devs ...gpu.Device) *node {
	return &node{t: t, devs: devs, perGPU: perGPU, held: map[int][]gpu.Holding{}}
}

func (n *node) free() []gpu.DeviceFree {
	var all []gpu.Holding
	for id := 0; id < n.nextID; id++ {
		all = append(all, n.held[id]...)
	}
	return gpu.FreeOf(n.devs, all, n.perGPU)
}

// start packs a job of amount (decimal fGPU) for uid; it returns the job
// id and its shares, or -1 when the job does not fit. It also checks that
// Fits agrees with Pack.
func (n *node) start(uid uint32, amount string) (int, []gpu.Share) {
	n.t.Helper()
	req := gpu.Request{Amount: MustFGPU(n.t, amount), UID: uid}
	free := n.free()
	shares, ok := gpu.Pack(free, req, n.perGPU)
	if fits := gpu.Fits(free, req, n.perGPU); fits != ok {
		n.t.Fatalf("Fits says %v, Pack says %v for %s fGPU", fits, ok, amount)
	}
	if !ok {
		return -1, nil
	}
	id := n.nextID
	n.nextID++
	for _, s := range shares {
		n.held[id] = append(n.held[id], gpu.Holding{UID: uid, Share: s})
	}
	return id, shares
}

func (n *node) end(id int) { delete(n.held, id) }

// amounts renders shares as "device:amount" for compact comparisons.
func amounts(shares []gpu.Share) string {
	s := ""
	for i, sh := range shares {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%d:%s", sh.Device, sh.Amount)
		if sh.MIG != nil {
			s += "(" + sh.MIG.Name + ")"
		}
	}
	return s
}
