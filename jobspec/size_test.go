package jobspec

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	const (
		K = int64(1) << 10
		M = int64(1) << 20
		G = int64(1) << 30
		T = int64(1) << 40
	)
	good := []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"512", 512 * M}, // bare number is MiB
		{"1K", K}, {"1k", K}, {"1KB", K}, {"1kb", K}, {"1KiB", K}, {"1kib", K},
		{"300M", 300 * M}, {"300m", 300 * M}, {"300MB", 300 * M}, {"300Mb", 300 * M},
		{"4G", 4 * G}, {"4g", 4 * G}, {"4GB", 4 * G}, {"4GiB", 4 * G},
		{"2T", 2 * T}, {"2tb", 2 * T},
		{"1.5G", 3 * G / 2},
		{"0.5K", 512},
		{".5M", M / 2},
		{"1.1G", 1181116006}, // exactly floor(1.1 x 2^30), no float error
		{"007M", 7 * M},
		{"8388607T", 8388607 * T}, // the largest whole number of TiB in an int64
	}
	for _, tc := range good {
		got, err := ParseSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	bad := []string{"", "12Q", "G", "-1", "-1G", "1.5.5G", "1.", ".", "1 G", " 1G", "1G ", "1GBB",
		"1B", "1iB", "1Gi", "1e3", "0x10", "+5", "8388608T", "99999999999999999999", "1,5G", "1_000",
		strings.Repeat("1", 65)}
	for _, in := range bad {
		got, err := ParseSize(in)
		if err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
			continue
		}
		want := `invalid size "` + in + `": use a number with an optional K, M, G or T suffix`
		if err.Error() != want {
			t.Errorf("ParseSize(%q) error = %q, want %q", in, err, want)
		}
	}
}
