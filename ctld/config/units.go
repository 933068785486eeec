package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseTime reads a Slurm time limit and returns seconds: M, M:S, H:M:S,
// D-H, D-H:M or D-H:M:S. "UNLIMITED" and "INFINITE" (any case) mean 0, no
// limit.
func ParseTime(s string) (int64, error) {
	bad := func() (int64, error) {
		return 0, fmt.Errorf("invalid time %q: use M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED", s)
	}
	t := strings.TrimSpace(s)
	if strings.EqualFold(t, "UNLIMITED") || strings.EqualFold(t, "INFINITE") {
		return 0, nil
	}
	var days int64
	d, rest, withDays := strings.Cut(t, "-")
	if withDays {
		n, err := parseField(d)
		if err != nil {
			return bad()
		}
		days, t = n, rest
	}
	parts := strings.Split(t, ":")
	if len(parts) > 3 {
		return bad()
	}
	nums := make([]int64, len(parts))
	for i, p := range parts {
		n, err := parseField(p)
		if err != nil {
			return bad()
		}
		nums[i] = n
	}
	var h, m, sec int64
	switch {
	case withDays: // D-H, D-H:M, D-H:M:S
		h = nums[0]
		if len(nums) > 1 {
			m = nums[1]
		}
		if len(nums) > 2 {
			sec = nums[2]
		}
	case len(nums) == 1: // M
		m = nums[0]
	case len(nums) == 2: // M:S
		m, sec = nums[0], nums[1]
	default: // H:M:S
		h, m, sec = nums[0], nums[1], nums[2]
	}
	total := ((days*24+h)*60+m)*60 + sec
	if total < 0 || days > 1e6 || h > 1e8 || m > 1e10 {
		return 0, fmt.Errorf("invalid time %q: too large", s)
	}
	return total, nil
}

func parseField(p string) (int64, error) {
	if p == "" {
		return 0, fmt.Errorf("empty")
	}
	for _, c := range p {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("not a number")
		}
	}
	return strconv.ParseInt(p, 10, 64)
}

// FormatTime writes seconds as Slurm prints limits: D-HH:MM:SS or HH:MM:SS,
// and "UNLIMITED" for 0.
func FormatTime(secs int64) string {
	if secs <= 0 {
		return "UNLIMITED"
	}
	d, h, m, s := secs/86400, secs/3600%24, secs/60%60, secs%60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
}

// ParseSize reads a memory size: a number with an optional K, M, G or T
// suffix (binary units, optional trailing B, any case). A bare number is
// MiB, as in slurm.conf.
func ParseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	unitRequired, bytes := false, false
	switch {
	case strings.HasSuffix(t, "IB"): // KiB, MiB...
		t, unitRequired = strings.TrimSuffix(t, "IB"), true
	case strings.HasSuffix(t, "B"): // KB, MB... or plain bytes
		t, bytes = strings.TrimSuffix(t, "B"), true
	}
	mult := int64(1 << 20) // bare numbers are MiB
	if t != "" {
		if m, ok := map[byte]int64{'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40}[t[len(t)-1]]; ok {
			mult, t = m, t[:len(t)-1]
		} else if unitRequired {
			t = "bad"
		} else if bytes {
			mult = 1
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) || strings.ContainsAny(t, "eE+-xXpP_") {
		return 0, fmt.Errorf("invalid size %q: use a number with an optional K, M, G or T suffix", s)
	}
	b := v * float64(mult)
	if b >= math.MaxInt64/2 {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	return int64(b), nil
}

// FormatSize writes bytes the short way: 512M, 1.5G, 2T.
func FormatSize(b int64) string {
	units := []struct {
		div  int64
		unit string
	}{{1 << 40, "T"}, {1 << 30, "G"}, {1 << 20, "M"}, {1 << 10, "K"}}
	for _, u := range units {
		if b >= u.div {
			v := float64(b) / float64(u.div)
			if b%u.div == 0 {
				return fmt.Sprintf("%d%s", b/u.div, u.unit)
			}
			return strconv.FormatFloat(v, 'f', 1, 64) + u.unit
		}
	}
	return fmt.Sprintf("%dB", b)
}
