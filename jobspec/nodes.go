package jobspec

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/corral-hpc/corral/hostlist"
)

// NodeNames expands the value of -w or -x (option names it in errors): a
// host list (dev[1-2],gpu01), or, when the value contains a slash, the
// file it names, read for names separated by commas, spaces or lines, as
// Slurm reads it.
func NodeNames(option, v string) ([]string, error) {
	expr := v
	if strings.Contains(v, "/") {
		data, err := os.ReadFile(v)
		if err != nil {
			return nil, fmt.Errorf("--%s: %v", option, err)
		}
		expr = strings.Join(strings.Fields(strings.ReplaceAll(string(data), ",", " ")), ",")
		if expr == "" {
			return nil, fmt.Errorf("--%s: no node names in %s", option, v)
		}
	}
	names, err := hostlist.Expand(expr)
	if err != nil {
		return nil, fmt.Errorf("--%s: %v", option, err)
	}
	return names, nil
}

// setNodeNames sets *dst to the names of -w or -x; a later value replaces
// an earlier one, as for every option.
func setNodeNames(dst *[]string, option, v string) error {
	names, err := NodeNames(option, v)
	if err != nil {
		return err
	}
	*dst = names
	return nil
}

// applyNodeFile is --nodefile: -w's list, always read from a file.
func applyNodeFile(r *Request, v string) error {
	if !strings.Contains(v, "/") {
		v = "./" + v // NodeNames reads a value with a slash as a file
	}
	return setNodeNames(&r.Spec.NodeList, "nodefile", v)
}

// nodesInBoth are the names in both lists, in the first list's order.
func nodesInBoth(a, b []string) []string {
	var both []string
	for _, n := range a {
		if slices.Contains(b, n) {
			both = append(both, n)
		}
	}
	return both
}
