package config

import (
	"fmt"
	"strings"
)

// parseOverSubscribe reads a partition's OverSubscribe= as Slurm writes
// it. corral's CPUs, memory and GPUs are consumable: a CPU is never given
// to two jobs. So NO and YES both let jobs share a node's unused CPUs
// (YES also keeps a job's -s), EXCLUSIVE gives every job whole nodes,
// and what would put several jobs on one CPU (FORCE, YES:N with N > 1)
// is refused rather than silently run differently.
func parseOverSubscribe(v string) (string, error) {
	word, count, counted := strings.Cut(strings.ToUpper(v), ":")
	switch word {
	case "NO", "EXCLUSIVE":
		if counted {
			return "", fmt.Errorf("%s takes no job count (got %s)", word, v)
		}
		return word, nil
	case "YES":
		if counted && count != "1" {
			return "", fmt.Errorf("%s: corral never puts two jobs on one CPU, so it takes no job count per CPU; write YES", v)
		}
		return word, nil
	case "FORCE":
		return "", fmt.Errorf("%s: corral never puts two jobs on one CPU; use NO, YES or EXCLUSIVE", v)
	}
	return "", fmt.Errorf("%s: use NO, YES or EXCLUSIVE", v)
}
