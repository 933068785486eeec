package gpu_test

import (
	"strings"
	"testing"

	"github.com/corral-hpc/corral/gpu"
)

func TestParseFGPU(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want gpu.Hundredths
	}{
		{"0.5", 50}, {"1", 100}, {"2.25", 225}, {".75", 75}, {"0.05", 5}, {"0.1", 10},
		{" 3 ", 300}, {"007.10", 710}, {"100000", 10_000_000}, {"0.01", 1},
	} {
		got, err := gpu.ParseFGPU(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseFGPU(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestParseFGPUErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "empty"},
		{"abc", "not a number"},
		{"1e3", "not a number"},
		{"+1", "not a number"},
		{"1,5", "not a number"},
		{"1.", "not a number"},
		{".", "not a number"},
		{"0x10", "not a number"},
		{"-1", "negative"},
		{"-0.5", "negative"},
		{"0", "must be more than 0"},
		{"0.00", "must be more than 0"},
		{"0.125", "more than 2 decimal places"},
		{"1.000", "more than 2 decimal places"},
		{"100000.01", "at most 100000 fGPU"},
		{"99999999999999999999", "at most 100000 fGPU"},
	} {
		_, err := gpu.ParseFGPU(tc.in)
		if err == nil {
			t.Errorf("ParseFGPU(%q) accepted", tc.in)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.want) || !strings.HasPrefix(msg, "invalid fGPU amount ") || strings.Contains(msg, "\n") {
			t.Errorf("ParseFGPU(%q) error %q; want one line about %q", tc.in, msg, tc.want)
		}
	}
}

func TestHundredthsString(t *testing.T) {
	for h, want := range map[gpu.Hundredths]string{
		50: "0.5", 225: "2.25", 100: "1", 5: "0.05", 10: "0.1", 0: "0", -50: "-0.5", 1001: "10.01",
	} {
		if got := h.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(h), got, want)
		}
	}
	// Every amount survives a round trip through its text.
	for h := gpu.Hundredths(1); h <= 2000; h++ {
		if back, err := gpu.ParseFGPU(h.String()); err != nil || back != h {
			t.Fatalf("%d -> %q -> %d, %v", int(h), h.String(), back, err)
		}
	}
}

func TestParsePerGPU(t *testing.T) {
	for in, want := range map[string]gpu.Hundredths{"1": 100, "2": 200, "5": 500, "2.5": 250, "100": 10000} {
		if got, err := gpu.ParsePerGPU(in); err != nil || got != want {
			t.Errorf("ParsePerGPU(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"0": "at least 1", "0.5": "at least 1", "101": "at most 100", "x": "not a number", "-2": "negative",
	} {
		_, err := gpu.ParsePerGPU(in)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "invalid fgpu_per_gpu ") {
			t.Errorf("ParsePerGPU(%q) error %v; want one about %q", in, err, want)
		}
	}
}

func TestConversions(t *testing.T) {
	if got := gpu.GPUs(3, 200); got != 600 {
		t.Errorf("3 GPUs at 2 fGPU each = %d hundredths, want 600", got)
	}
	if got := gpu.NodeCapacity(devices(8), gpu.DefaultPerGPU); got != 800 {
		t.Errorf("8 GPUs at the default = %d, want 800", got)
	}
	for _, tc := range []struct {
		name           string
		amount, perGPU gpu.Hundredths
		want           gpu.Limits
	}{
		// seed 003: 0.5 fGPU where a GPU is 2 fGPU is a quarter of the card.
		{"quarter", 50, 200, gpu.Limits{MemBytes: 10 * gpu.GiB, MemMiB: 10240, SMPercent: 25, SMs: 27}},
		{"third, rounded down", 100, 300, gpu.Limits{MemBytes: 13653 * gpu.MiB, MemMiB: 13653, SMPercent: 33, SMs: 36}},
		{"whole", 500, 500, gpu.Limits{MemBytes: 40 * gpu.GiB, MemMiB: 40960, SMPercent: 100, SMs: 108}},
		{"more than whole is whole", 700, 500, gpu.Limits{MemBytes: 40 * gpu.GiB, MemMiB: 40960, SMPercent: 100, SMs: 108}},
		{"tiny share still gets 1%", 1, 10000, gpu.Limits{MemBytes: 4 * gpu.MiB, MemMiB: 4, SMPercent: 1, SMs: 0}},
		{"nothing", 0, 100, gpu.Limits{}},
	} {
		if got := gpu.LimitsOf(a100(0), tc.amount, tc.perGPU); got != tc.want {
			t.Errorf("%s: LimitsOf(%d/%d) = %+v, want %+v", tc.name, tc.amount, tc.perGPU, got, tc.want)
		}
	}
}
