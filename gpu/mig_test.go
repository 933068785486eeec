package gpu_test

import (
	"testing"

	"github.com/corral-hpc/corral/gpu"
)

func TestMIGNames(t *testing.T) {
	const a100_80 = 81920 * gpu.MiB
	for _, tc := range []struct {
		slices    int
		mib, card int64
		variant   string
		eighths   int
		want      string
	}{
		{1, 4864, a100Bytes, "", 1, "1g.5gb"},
		{1, 4864, a100Bytes, "+me", 1, "1g.5gb+me"},
		{1, 9856, a100Bytes, "", 2, "1g.10gb"},
		{2, 9856, a100Bytes, "", 2, "2g.10gb"},
		{3, 19968, a100Bytes, "", 4, "3g.20gb"},
		{4, 19968, a100Bytes, "", 4, "4g.20gb"},
		{7, 40192, a100Bytes, "", 8, "7g.40gb"},
		{1, 9856, a100_80, "", 1, "1g.10gb"},
		{3, 40192, a100_80, "", 4, "3g.40gb"},
		{7, 80384, a100_80, "", 8, "7g.80gb"},
	} {
		e := gpu.MIGMemEighths(tc.mib*gpu.MiB, tc.card)
		name := gpu.MIGName(tc.slices, e, tc.card, tc.variant)
		if e != tc.eighths || name != tc.want {
			t.Errorf("%d slices, %d MiB of %d: eighths %d name %q; want %d %q", tc.slices, tc.mib, tc.card/gpu.MiB, e, name, tc.eighths, tc.want)
		}
	}
}

func TestMIGProfileFor(t *testing.T) {
	mig := a100MIG(0)
	for _, tc := range []struct {
		amount, perGPU gpu.Hundredths
		want           string // "" = no profile
	}{
		{10, 100, "1g.5gb"},
		{12, 100, "1g.5gb"},  // 0.12 <= 1/8 memory and 1/7 compute
		{13, 100, "1g.10gb"}, // 1/8 memory is too little; 1 slice is still enough
		{14, 100, "1g.10gb"},
		{15, 100, "2g.10gb"}, // 0.15 > 1/7 compute
		{25, 100, "2g.10gb"},
		{50, 200, "2g.10gb"}, // seed 003's 0.5 fGPU at 2 fGPU per GPU
		{26, 100, "3g.20gb"}, // 0.26 > 2/8 memory
		{29, 100, "3g.20gb"}, // 0.29 > 2/7
		{42, 100, "3g.20gb"},
		{43, 100, "4g.20gb"}, // 0.43 > 3/7
		{50, 100, "4g.20gb"},
		{51, 100, "7g.40gb"}, // 0.51 > 4/8 memory
		{58, 100, "7g.40gb"}, // 0.58 > 4/7
		{100, 100, "7g.40gb"},
		{101, 100, ""}, // more than a device
		{0, 100, ""},
	} {
		p, ok := gpu.MIGProfileFor(mig, tc.amount, tc.perGPU)
		if got := map[bool]string{true: p.Name}[ok]; got != tc.want {
			t.Errorf("MIGProfileFor(%d/%d) = %q, want %q", tc.amount, tc.perGPU, got, tc.want)
		}
		if ok && p.Variant != "" {
			t.Errorf("MIGProfileFor(%d/%d) chose variant %q", tc.amount, tc.perGPU, p.Name)
		}
	}
	off := a100MIG(1)
	off.MIGEnabled = false
	if p, ok := gpu.MIGProfileFor(off, 25, 100); ok {
		t.Errorf("MIG off still gave %s", p.Name)
	}
	if p, ok := gpu.MIGProfileFor(a100(2), 25, 100); ok {
		t.Errorf("device without MIG gave %s", p.Name)
	}
}

func TestMIGCharge(t *testing.T) {
	mig := a100MIG(0)
	byName := map[string]gpu.MIGProfile{}
	for _, p := range mig.MIG {
		if p.Variant == "" {
			byName[p.Name] = p
		}
	}
	for name, want := range map[string]gpu.Hundredths{
		"1g.5gb": 14, "1g.10gb": 25, "2g.10gb": 28, "3g.20gb": 50, "4g.20gb": 57, "7g.40gb": 100,
	} {
		if got := gpu.MIGCharge(byName[name], 7, 100); got != want {
			t.Errorf("charge of %s = %d, want %d", name, got, want)
		}
	}
	// Seven 1g.5gb instances fit an A100, so their charges must too.
	if c := gpu.MIGCharge(byName["1g.5gb"], 7, 100); 7*c > 100 {
		t.Errorf("seven 1g.5gb charge %d > one device", 7*c)
	}
	// Whatever amount picks a profile is never charged less than it asked
	// for, nor more than the device, for any fgpu_per_gpu.
	for _, perGPU := range []gpu.Hundredths{100, 200, 250, 500} {
		for a := gpu.Hundredths(1); a <= perGPU; a++ {
			p, ok := gpu.MIGProfileFor(mig, a, perGPU)
			if !ok {
				t.Fatalf("no profile for %d/%d", a, perGPU)
			}
			if c := gpu.MIGCharge(p, 7, perGPU); c < a || c > perGPU {
				t.Fatalf("%d/%d -> %s charged %d", a, perGPU, p.Name, c)
			}
		}
	}
}
