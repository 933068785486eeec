package gpu_test

import (
	"testing"

	"github.com/corral-hpc/corral/gpu"
)

func TestMatchesType(t *testing.T) {
	for _, tc := range []struct {
		model, typ string
		want       bool
	}{
		{"NVIDIA A100-SXM4-40GB", "a100", true},
		{"NVIDIA A100-SXM4-40GB", "A100", true},
		{"NVIDIA A100-SXM4-40GB", "a100-40gb", true},
		{"NVIDIA A100-SXM4-40GB", "a100_sxm4", true},
		{"Mock NVIDIA A100-SXM4-40GB", "a100", true},
		{"NVIDIA A100-SXM4-40GB", "", true},
		{"NVIDIA A100-SXM4-40GB", "a10", false},
		{"NVIDIA A100-SXM4-40GB", "h100", false},
		{"NVIDIA A100-SXM4-40GB", "a100-80gb", false},
		{"NVIDIA H100 80GB HBM3", "h100", true},
		{"NVIDIA H100 80GB HBM3", "h10080gb", true},
		{"NVIDIA GeForce RTX 4090", "rtx4090", true},
		{"NVIDIA GeForce RTX 4090", "rtx409", false},
		{"Tesla T4", "t4", true},
		{"Tesla T4", "tesla-t4", true},
		{"", "a100", false},
	} {
		if got := gpu.MatchesType(tc.model, tc.typ); got != tc.want {
			t.Errorf("MatchesType(%q, %q) = %v, want %v", tc.model, tc.typ, got, tc.want)
		}
	}
}

func TestFilterTypeKeepsOrder(t *testing.T) {
	devs := []gpu.Device{{Index: 0, Name: "Tesla T4"}, {Index: 1, Name: "NVIDIA A100-SXM4-40GB"}, {Index: 2, Name: "NVIDIA A100-SXM4-80GB"}}
	got := gpu.FilterType(devs, "a100")
	if len(got) != 2 || got[0].Index != 1 || got[1].Index != 2 {
		t.Fatalf("a100 devices %+v", got)
	}
	if len(gpu.FilterType(devs, "")) != 3 || len(gpu.FilterType(devs, "v100")) != 0 {
		t.Fatal("empty type must keep all, unknown type none")
	}
}

func TestAPIRoundTrip(t *testing.T) {
	d := a100MIG(3)
	d.Minor = 7
	back := gpu.DeviceFromAPI(d.API())
	if back.Minor != 7 || back.UUID != d.UUID || len(back.MIG) != len(d.MIG) || back.MIG[2] != d.MIG[2] || !back.MIGEnabled {
		t.Fatalf("device round trip: %+v", back)
	}
	p := d.MIG[1]
	s := gpu.Share{Device: 3, Amount: 28, MIG: &p, MIGDevice: "MIG-x"}
	got := gpu.ShareFromAPI(s.API())
	if got.Device != 3 || got.Amount != 28 || got.MIG == nil || *got.MIG != p || got.MIGDevice != "MIG-x" {
		t.Fatalf("share round trip: %+v", got)
	}
	if gpu.Total([]gpu.Share{{Amount: 50}, {Amount: 200}}) != 250 {
		t.Fatal("Total")
	}
}
