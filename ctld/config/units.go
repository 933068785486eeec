package config

import (
	"fmt"
	"github.com/corral-hpc/corral/jobspec"
	"strconv"
	"strings"
)

// ParseTime reads a Slurm time limit and returns seconds (M, M:S, H:M:S,
// D-H, D-H:M, D-H:M:S; UNLIMITED and INFINITE mean 0, no limit). It is
// jobspec's parser: the config file and sbatch spell limits alike.
func ParseTime(s string) (int64, error) { return jobspec.ParseTimeLimit(strings.TrimSpace(s)) }

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

// ParseSize reads a memory size (K, M, G or T suffix; a bare number is
// MiB, as in slurm.conf) with jobspec's parser, the one for all sizes.
func ParseSize(s string) (int64, error) { return jobspec.ParseSize(strings.TrimSpace(s)) }

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
