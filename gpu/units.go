package gpu

import (
	"fmt"
	"strconv"
	"strings"
)

// Hundredths is an amount of fGPU in hundredths (0.01 quantum): "0.5" fGPU
// is 50. It is the unit of sched.Resources.FGPU.
type Hundredths int

var _ fmt.Stringer = Hundredths(0)

// One is one fGPU.
const One Hundredths = 100

const (
	// MaxFGPU bounds a parsed request (in fGPU), far above any node, so
	// that arithmetic on amounts cannot overflow.
	MaxFGPU = 100_000
	// MaxPerGPU bounds fgpu_per_gpu (in fGPU): 100 fGPU per GPU already
	// makes the quantum 1/10000 of a device.
	MaxPerGPU = 100
	// DefaultPerGPU is fgpu_per_gpu when the admin sets nothing: one fGPU
	// is one physical GPU.
	DefaultPerGPU = One
)

// fgpuHint is the tail of every bad-amount error.
const fgpuHint = "use decimal fGPU such as 0.5, 1 or 2.25"

// ParseFGPU reads a requested amount of fGPU: a positive decimal with at
// most two decimal places ("0.5", "1", "2.25", ".75"). Zero, negative
// amounts, more than two decimals and anything else give one error line.
func ParseFGPU(s string) (Hundredths, error) {
	h, err := parseDecimal(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("invalid fGPU amount %q: %v", s, err)
	}
	if h == 0 {
		return 0, fmt.Errorf("invalid fGPU amount %q: must be more than 0", s)
	}
	if h > MaxFGPU*One {
		return 0, fmt.Errorf("invalid fGPU amount %q: at most %d fGPU", s, MaxFGPU)
	}
	return h, nil
}

// ParsePerGPU reads fgpu_per_gpu, the number of fGPU one physical GPU is
// worth: at least 1, at most MaxPerGPU, two decimals at most ("2", "5",
// "2.5").
func ParsePerGPU(s string) (Hundredths, error) {
	h, err := parseDecimal(strings.TrimSpace(s))
	if err == nil {
		err = CheckPerGPU(h)
	}
	if err != nil {
		return 0, fmt.Errorf("invalid fgpu_per_gpu %q: %v", s, err)
	}
	return h, nil
}

// CheckPerGPU says why perGPU cannot be fgpu_per_gpu, or nil.
func CheckPerGPU(perGPU Hundredths) error {
	if perGPU < One {
		return fmt.Errorf("must be at least 1 fGPU per GPU, got %s", perGPU)
	}
	if perGPU > MaxPerGPU*One {
		return fmt.Errorf("must be at most %d fGPU per GPU, got %s", MaxPerGPU, perGPU)
	}
	return nil
}

// parseDecimal reads [digits][.digits] with at most two decimals, exactly.
func parseDecimal(s string) (Hundredths, error) {
	if s == "" {
		return 0, fmt.Errorf("empty; %s", fgpuHint)
	}
	if s[0] == '-' {
		return 0, fmt.Errorf("negative; %s", fgpuHint)
	}
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" && frac == "" || dot && frac == "" || !digits(whole) || !digits(frac) {
		return 0, fmt.Errorf("not a number; %s", fgpuHint)
	}
	if len(frac) > 2 {
		return 0, fmt.Errorf("more than 2 decimal places (the quantum is 0.01 fGPU)")
	}
	// Eight digits of whole fGPU are far beyond MaxFGPU; more would only
	// risk overflow before the range check.
	whole = strings.TrimLeft(whole, "0")
	if len(whole) > 8 {
		return 0, fmt.Errorf("at most %d fGPU", MaxFGPU)
	}
	n, _ := strconv.Atoi("0" + whole + (frac + "00")[:2])
	return Hundredths(n), nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String formats h as decimal fGPU without trailing zeros: 50 -> "0.5",
// 225 -> "2.25", 100 -> "1".
func (h Hundredths) String() string {
	sign := ""
	if h < 0 {
		sign, h = "-", -h
	}
	whole, frac := int(h/One), int(h%One)
	switch {
	case frac == 0:
		return fmt.Sprintf("%s%d", sign, whole)
	case frac%10 == 0:
		return fmt.Sprintf("%s%d.%d", sign, whole, frac/10)
	}
	return fmt.Sprintf("%s%d.%02d", sign, whole, frac)
}

// GPUs is n whole physical GPUs in fGPU hundredths (n x fgpu_per_gpu).
func GPUs(n int, perGPU Hundredths) Hundredths { return Hundredths(n) * perGPU }

// NodeCapacity is what a node with these devices offers in total, the
// value for sched.Resources.FGPU.
func NodeCapacity(devs []Device, perGPU Hundredths) Hundredths { return GPUs(len(devs), perGPU) }

// Limits is what a share of one device entitles a job to.
type Limits struct {
	MemBytes int64 // share of the device's memory, rounded down to whole MiB
	MemMiB   int64 // the same in MiB (the unit of the MPS memory limit)
	// SMPercent is the share of the SMs in whole percent, rounded down but
	// at least 1 (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE).
	SMPercent int
	SMs       int // the share of the device's SMs, rounded down; 0 if unknown
}

// LimitsOf is the memory and SM share that amount hundredths of dev give,
// where the whole device is worth perGPU: fraction f = amount/perGPU gets
// f x memory and f x 100% of the SMs. Rounding is always down, so shares
// that add up to a device never add up to more than it.
func LimitsOf(dev Device, amount, perGPU Hundredths) Limits {
	if perGPU <= 0 || amount <= 0 {
		return Limits{}
	}
	if amount > perGPU {
		amount = perGPU
	}
	mib := dev.MemoryBytes / MiB * int64(amount) / int64(perGPU)
	pct := int(100 * int64(amount) / int64(perGPU))
	if pct < 1 {
		pct = 1
	}
	return Limits{
		MemBytes:  mib * MiB,
		MemMiB:    mib,
		SMPercent: pct,
		SMs:       int(int64(dev.SMs) * int64(amount) / int64(perGPU)),
	}
}

// MiB and GiB are binary sizes in bytes.
const (
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
)
