package jobspec

import (
	"fmt"
	"math/big"
	"strings"
)

// sizeHint is the one-line explanation every bad size gets.
const sizeHint = "use a number with an optional K, M, G or T suffix"

// ParseSize reads a memory size as sbatch does: a number with an optional
// K, M, G or T suffix (powers of 1024, any case, optionally followed by B or
// iB); a bare number is MiB. A decimal fraction is allowed ("1.5G") and
// rounded down to whole bytes.
func ParseSize(s string) (int64, error) {
	n, ok := parseSize(s)
	if !ok {
		return 0, fmt.Errorf("invalid size %q: %s", s, sizeHint)
	}
	return n, nil
}

func parseSize(s string) (int64, bool) {
	if len(s) > 64 {
		return 0, false
	}
	digits := strings.TrimRight(s, "kKmMgGtTbBiI")
	unit, ok := sizeUnit(s[len(digits):])
	if !ok {
		return 0, false
	}
	whole, frac, dot := strings.Cut(digits, ".")
	if whole == "" && frac == "" || dot && frac == "" || !allDigits(whole) || !allDigits(frac) {
		return 0, false
	}
	// (whole.frac) x unit, rounded down, computed exactly: 1.1G must not
	// come out a byte short because of binary floating point.
	num, _ := new(big.Int).SetString(whole+frac+"0", 10)
	num.Mul(num, big.NewInt(unit))
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac)+1)), nil)
	num.Quo(num, den)
	if !num.IsInt64() {
		return 0, false
	}
	return num.Int64(), true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// sizeUnit maps a suffix ("", "G", "gb", "GiB") to its multiplier.
func sizeUnit(suffix string) (int64, bool) {
	s := strings.ToUpper(suffix)
	if s == "" {
		return 1 << 20, true // sbatch: a bare number is MiB
	}
	letter := s[0]
	switch rest := s[1:]; rest {
	case "", "B", "IB":
	default:
		return 0, false
	}
	switch letter {
	case 'K':
		return 1 << 10, true
	case 'M':
		return 1 << 20, true
	case 'G':
		return 1 << 30, true
	case 'T':
		return 1 << 40, true
	}
	return 0, false
}
