package gpu_test

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/corral-hpc/corral/gpu"
)

func TestFourHalvesFillTwoGPUs(t *testing.T) {
	n := newNode(t, gpu.DefaultPerGPU, devices(2)...)
	var got []string
	for range 4 {
		id, shares := n.start(1000, "0.5")
		if id < 0 {
			t.Fatalf("a 0.5 job did not fit after %v", got)
		}
		got = append(got, amounts(shares))
	}
	if want := []string{"0:0.5", "0:0.5", "1:0.5", "1:0.5"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("four halves went to %v, want %v", got, want)
	}
	for _, f := range n.free() {
		if f.Free != 0 {
			t.Errorf("device %d has %s free after four halves", f.Device.Index, f.Free)
		}
	}
	if id, _ := n.start(1000, "0.01"); id >= 0 {
		t.Error("0.01 fit on two full devices")
	}
}

func TestWholeWaitsForWholeDevice(t *testing.T) {
	n := newNode(t, gpu.DefaultPerGPU, devices(2)...)
	var halves []int
	for range 4 {
		id, _ := n.start(1000, "0.5")
		halves = append(halves, id)
	}
	// 1 fGPU is free in total after one half on each device ends, but no
	// single device is whole: the request must wait.
	n.end(halves[0]) // device 0
	n.end(halves[2]) // device 1
	if id, _ := n.start(1000, "1"); id >= 0 {
		t.Fatal("a 1-GPU job was split over two half-free devices")
	}
	n.end(halves[1]) // device 0 is whole again
	id, shares := n.start(1000, "1")
	if id < 0 || amounts(shares) != "0:1" {
		t.Fatalf("1-GPU job after device 0 freed: %q (id %d), want 0:1", amounts(shares), id)
	}
}

// Seed 000: a host with up to 2 fGPU (one GPU, fgpu_per_gpu 2) and three
// 1-fGPU sessions: two run, the third waits until one ends.
func TestSeed000TwoOfThreeRun(t *testing.T) {
	n := newNode(t, 200, a100(0))
	a, _ := n.start(1000, "1")
	b, _ := n.start(1000, "1")
	c, _ := n.start(1000, "1")
	if a < 0 || b < 0 || c >= 0 {
		t.Fatalf("three 1-fGPU sessions on 2 fGPU: ids %d %d %d, want two to run and one to wait", a, b, c)
	}
	n.end(a)
	if c, _ = n.start(1000, "1"); c < 0 {
		t.Fatal("the waiting session did not fit after one ended")
	}
}

// freeView builds a packer view directly: device i has free[i] hundredths,
// MPS-shared by uid 1000 when partly used.
func freeView(free ...gpu.Hundredths) []gpu.DeviceFree {
	out := make([]gpu.DeviceFree, len(free))
	for i, f := range free {
		out[i] = gpu.DeviceFree{Device: a100(i), Free: f, MPSShared: f < 100, MPSUser: 1000}
	}
	return out
}

func TestBestFit(t *testing.T) {
	view := freeView(30, 70, 100, 50, 0)
	for _, tc := range []struct {
		amount string
		want   string
	}{
		{"0.25", "0:0.25"}, // 30 is the smallest that holds it
		{"0.3", "0:0.3"},   // exactly
		{"0.4", "3:0.4"},   // 50, not 70
		{"0.6", "1:0.6"},   // 70, not the untouched device
		{"0.8", "2:0.8"},   // only the untouched device holds it
		{"1", "2:1"},
	} {
		shares, ok := gpu.Pack(view, gpu.Request{Amount: MustFGPU(t, tc.amount), UID: 1000}, 100)
		if !ok || amounts(shares) != tc.want {
			t.Errorf("%s fGPU went to %q (ok %v), want %q", tc.amount, amounts(shares), ok, tc.want)
		}
	}
}

func TestLargerThanOneGPU(t *testing.T) {
	for _, tc := range []struct {
		name   string
		view   []gpu.DeviceFree
		amount string
		want   string // "" = does not fit
	}{
		{"two whole", freeView(100, 100, 100), "2", "0:1 1:1"},
		{"whole plus fraction on free devices", freeView(100, 100, 100, 100), "2.5", "0:0.5 1:1 2:1"},
		{"fraction goes to the partly used device", freeView(100, 60, 100, 100), "2.5", "0:1 1:0.5 2:1"},
		{"fraction best-fit among partly used", freeView(80, 100, 55, 100, 100), "2.5", "1:1 2:0.5 3:1"},
		{"whole devices skip partly used ones", freeView(100, 60, 100, 100), "3", "0:1 2:1 3:1"},
		{"fragmented: 2.4 free but no two whole", freeView(60, 60, 60, 60), "2", ""},
		{"one whole short", freeView(100, 90, 100), "2.95", ""},
		{"fraction needs a free device beyond the wholes", freeView(100, 100, 40), "2.5", ""},
		{"fraction on a spare free device", freeView(100, 100, 40, 100), "2.5", "0:0.5 1:1 3:1"},
		{"all eight", freeView(100, 100, 100, 100, 100, 100, 100, 100), "8", "0:1 1:1 2:1 3:1 4:1 5:1 6:1 7:1"},
		{"nine on eight", freeView(100, 100, 100, 100, 100, 100, 100, 100), "8.01", ""},
	} {
		req := gpu.Request{Amount: MustFGPU(t, tc.amount), UID: 1000}
		shares, ok := gpu.Pack(tc.view, req, 100)
		if got := amounts(shares); got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: %s fGPU -> %q ok %v, want %q", tc.name, tc.amount, got, ok, tc.want)
		}
		if fits := gpu.Fits(tc.view, req, 100); fits != ok {
			t.Errorf("%s: Fits %v but Pack %v", tc.name, fits, ok)
		}
	}
}

func TestMPSUsersDoNotMix(t *testing.T) {
	n := newNode(t, gpu.DefaultPerGPU, devices(2)...)
	if id, sh := n.start(1000, "0.5"); id < 0 || amounts(sh) != "0:0.5" {
		t.Fatalf("first job: %q", amounts(sh))
	}
	// Another user's fraction must not join uid 1000's MPS device.
	if id, sh := n.start(2000, "0.25"); id < 0 || amounts(sh) != "1:0.25" {
		t.Fatalf("uid 2000 went to %q, want device 1", amounts(sh))
	}
	// uid 1000 again prefers its own partly used device.
	if id, sh := n.start(1000, "0.5"); id < 0 || amounts(sh) != "0:0.5" {
		t.Fatalf("uid 1000 went to %q, want device 0", amounts(sh))
	}
	// Room is left only on uid 2000's device.
	if id, sh := n.start(3000, "0.5"); id >= 0 {
		t.Fatalf("uid 3000 was put on %q, next to another user", amounts(sh))
	}
	if id, sh := n.start(2000, "0.75"); id < 0 || amounts(sh) != "1:0.75" {
		t.Fatalf("uid 2000 could not fill its own device: %q", amounts(sh))
	}
}

func TestMIGDevicePacking(t *testing.T) {
	n := newNode(t, gpu.DefaultPerGPU, a100MIG(0))
	var got []string
	for range 4 {
		if id, sh := n.start(uint32(1000+len(got)), "0.25"); id >= 0 {
			got = append(got, amounts(sh))
		}
	}
	// Each 0.25 is a 2g.10gb instance charged 2/7 of the device: three
	// fit, as on the hardware (2g.10gb has 3 instances), and users mix
	// freely because MIG isolates them.
	want := []string{"0:0.28(2g.10gb)", "0:0.28(2g.10gb)", "0:0.28(2g.10gb)"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("0.25 jobs on a MIG A100: %v, want %v", got, want)
	}
	if id, sh := n.start(1000, "0.12"); id < 0 || amounts(sh) != "0:0.14(1g.5gb)" {
		t.Fatalf("1g.5gb in the rest: %q", amounts(sh))
	}
}

func TestPackEdges(t *testing.T) {
	view := freeView(100, 100)
	if sh, ok := gpu.Pack(view, gpu.Request{}, 100); !ok || sh != nil {
		t.Errorf("zero request: %v %v, want nothing and ok", sh, ok)
	}
	for _, tc := range []struct {
		name   string
		amount gpu.Hundredths
		perGPU gpu.Hundredths
	}{
		{"negative request", -50, 100},
		{"fgpu_per_gpu zero", 50, 0},
		{"fgpu_per_gpu below one", 50, 50},
	} {
		req := gpu.Request{Amount: tc.amount}
		if sh, ok := gpu.Pack(view, req, tc.perGPU); ok || sh != nil || gpu.Fits(view, req, tc.perGPU) {
			t.Errorf("%s accepted: %v", tc.name, sh)
		}
	}
	if _, ok := gpu.Pack(nil, gpu.Request{Amount: 1}, 100); ok {
		t.Error("a node without devices took a request")
	}
}

func TestFreeOf(t *testing.T) {
	devs := []gpu.Device{a100(0), a100(1), a100MIG(2), a100(3)}
	held := []gpu.Holding{
		{UID: 7, Share: gpu.Share{Device: 0, Amount: 30}},
		{UID: 7, Share: gpu.Share{Device: 0, Amount: 20}},
		{UID: 8, Share: gpu.Share{Device: 1, Amount: 100}},
		{UID: 9, Share: gpu.Share{Device: 2, Amount: 28}},
		{UID: 9, Share: gpu.Share{Device: 3, Amount: 90}},
		{UID: 9, Share: gpu.Share{Device: 3, Amount: 90}},  // overfull: clamps
		{UID: 9, Share: gpu.Share{Device: 42, Amount: 50}}, // gone device
	}
	got := gpu.FreeOf(devs, held, 100)
	type row struct {
		free   gpu.Hundredths
		shared bool
		user   uint32
	}
	want := []row{{50, true, 7}, {0, false, 0}, {72, false, 0}, {0, true, 9}}
	for i, f := range got {
		if r := (row{f.Free, f.MPSShared, f.MPSUser}); r != want[i] || f.Device.Index != devs[i].Index {
			t.Errorf("device %d: %+v, want %+v", f.Device.Index, r, want[i])
		}
	}
}

// Pack's answer does not depend on the order devices are listed in, Fits
// always agrees with it, and what it returns respects the rules.
func TestPackPropertiesRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for iter := range 3000 {
		perGPU := []gpu.Hundredths{100, 200, 500}[rng.Intn(3)]
		view := make([]gpu.DeviceFree, 1+rng.Intn(8))
		for i := range view {
			d := a100(i)
			if rng.Intn(5) == 0 {
				d = a100MIG(i)
			}
			free := perGPU
			if rng.Intn(2) == 0 {
				free = gpu.Hundredths(rng.Intn(int(perGPU) + 1))
			}
			view[i] = gpu.DeviceFree{Device: d, Free: free, MPSShared: !d.MIGEnabled && free < perGPU, MPSUser: uint32(rng.Intn(2))}
		}
		req := gpu.Request{Amount: gpu.Hundredths(1 + rng.Intn(int(perGPU)*3)), UID: uint32(rng.Intn(2))}
		shares, ok := gpu.Pack(view, req, perGPU)
		if fits := gpu.Fits(view, req, perGPU); fits != ok {
			t.Fatalf("iter %d: Fits %v, Pack %v", iter, fits, ok)
		}
		shuffled := append([]gpu.DeviceFree(nil), view...)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		again, ok2 := gpu.Pack(shuffled, req, perGPU)
		if ok2 != ok || !reflect.DeepEqual(again, shares) {
			t.Fatalf("iter %d: order changed the answer: %q vs %q", iter, amounts(shares), amounts(again))
		}
		if !ok {
			continue
		}
		checkShares(t, iter, view, req, perGPU, shares)
	}
}

func checkShares(t *testing.T, iter int, view []gpu.DeviceFree, req gpu.Request, perGPU gpu.Hundredths, shares []gpu.Share) {
	t.Helper()
	var sum gpu.Hundredths
	fractions, last := 0, -1
	for _, s := range shares {
		if s.Device <= last {
			t.Fatalf("iter %d: shares out of order or repeated: %q", iter, amounts(shares))
		}
		last = s.Device
		f := view[s.Device] // view[i] has index i
		if s.Amount <= 0 || s.Amount > f.Free {
			t.Fatalf("iter %d: share %s on device %d with %s free", iter, s.Amount, s.Device, f.Free)
		}
		if (s.MIG != nil) != f.Device.MIGEnabled {
			t.Fatalf("iter %d: MIG profile %v on device with MIG %v", iter, s.MIG, f.Device.MIGEnabled)
		}
		if s.Amount < perGPU {
			fractions++
			if f.MPSShared && f.MPSUser != req.UID && s.MIG == nil {
				t.Fatalf("iter %d: uid %d put on uid %d's MPS device", iter, req.UID, f.MPSUser)
			}
		}
		sum += s.Amount
	}
	if fractions > 1 {
		t.Fatalf("iter %d: %d fractions in %q", iter, fractions, amounts(shares))
	}
	if sum < req.Amount || (sum != req.Amount && !anyMIG(shares)) {
		t.Fatalf("iter %d: shares %q add up to %s for a request of %s", iter, amounts(shares), sum, req.Amount)
	}
	if req.Amount <= perGPU && len(shares) != 1 {
		t.Fatalf("iter %d: %s split over %q", iter, req.Amount, amounts(shares))
	}
}

func anyMIG(shares []gpu.Share) bool {
	for _, s := range shares {
		if s.MIG != nil {
			return true
		}
	}
	return false
}
