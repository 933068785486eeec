package jobspec

import (
	"errors"
	"fmt"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// How a job shares its nodes: --exclusive (with nobody), --exclusive=user
// (with the same user's jobs), -s/--oversubscribe (with anyone, where the
// partition allows it), and --mem=0 (all of each node's memory).

var (
	errExclusiveMCS  = errors.New("--exclusive=mcs: corral has no MCS labels; use --exclusive or --exclusive=user")
	errExclusiveTopo = errors.New("--exclusive=topo: corral has no network topology; use --exclusive or --exclusive=user")
)

// applyExclusive sets how the job shares its nodes; the last of
// --exclusive and --oversubscribe wins, as in sbatch.
func applyExclusive(r *Request, v string) error {
	r.Spec.OverSubscribe = false
	switch strings.ToLower(v) {
	case "", "exclusive", "allocation":
		r.Spec.Exclusive = "node"
	case "user":
		r.Spec.Exclusive = "user"
	case "oversubscribe":
		r.Spec.Exclusive, r.Spec.OverSubscribe = "", true
	case "mcs":
		return errExclusiveMCS
	case "topo":
		return errExclusiveTopo
	default:
		return badValue("exclusive", v, "use --exclusive or --exclusive=user")
	}
	return nil
}

// sharingProblems judges the sharing fields as the controller receives
// them: the CLI never sends a combination below, a hand-written request
// may.
func sharingProblems(spec *api.JobSpec) []error {
	var p []error
	switch spec.Exclusive {
	case "", "node", "user":
	case "mcs":
		p = append(p, errExclusiveMCS)
	case "topo":
		p = append(p, errExclusiveTopo)
	default:
		p = append(p, fmt.Errorf("invalid exclusive %q (valid: node, user)", spec.Exclusive))
	}
	if spec.OverSubscribe && spec.Exclusive != "" {
		p = append(p, errors.New("--oversubscribe and --exclusive cannot be combined: a job either shares its nodes or has them to itself"))
	}
	if spec.MemWholeNode {
		switch {
		case spec.MemPerCPU > 0:
			p = append(p, errors.New("--mem=0 (all of each node's memory) and --mem-per-cpu cannot be combined"))
		case spec.MemPerGPU > 0:
			p = append(p, errors.New("--mem=0 (all of each node's memory) and --mem-per-gpu cannot be combined"))
		case spec.MemBytes != 0:
			p = append(p, fmt.Errorf("--mem=0 asks for all of each node's memory, but the request also gives mem_bytes=%d", spec.MemBytes))
		}
	}
	return p
}
