package config

import (
	"fmt"
	"strings"
)

// Steps is what corral.conf says about job steps, on a line of its own:
//
//	MpiDefault=pmi2
type Steps struct {
	// MpiDefault is the PMI srun serves a step that gives no --mpi, as
	// Slurm's MpiDefault: "pmi2", or "" (none, the default).
	MpiDefault string
}

// stepKeys lists the keys of step lines.
var stepKeys = []string{"MpiDefault"}

// set applies one step line; settings remembers where each key was set
// (shared with the other setting lines) so a second setting is refused.
func (st *Steps) set(fields []string, lineNo int, settings map[string]int) error {
	return setLine(fields, lineNo, settings, "a step line", stepKeys, func(key, v string) error {
		switch strings.ToLower(v) {
		case "none":
			st.MpiDefault = ""
		case "pmi2":
			st.MpiDefault = "pmi2"
		default:
			return fmt.Errorf("MpiDefault=%s: use none or pmi2 (pmix is not served: Open MPI programs start with mpirun)", v)
		}
		return nil
	})
}
