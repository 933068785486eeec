package config

import (
	"fmt"
	"strings"

	"github.com/corral-hpc/corral/hostlist"
)

// A NodeName line gives nodes their features, as slurm.conf's Features=:
//
//	NodeName=gpu[01-04] Features=gpu,a100,ib
//
// Jobs ask for them with -C/--constraint. The node's size is what the
// node reports when it registers, so Features is the only other key.

// addNodeLine reads one NodeName line into features (node -> features);
// a node named on two lines is refused.
func addNodeLine(fields []string, features map[string][]string) error {
	var names, list []string
	given := map[string]bool{}
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return fmt.Errorf("%q is not KEY=VALUE", f)
		}
		key := canonicalIn(k, []string{"NodeName", "Features"})
		if key == "" {
			return fmt.Errorf("unknown key %s on a NodeName line (valid: NodeName, Features; a node's size is what it reports)", k)
		}
		if given[key] {
			return fmt.Errorf("%s is given twice", key)
		}
		given[key] = true
		if v == "" {
			return fmt.Errorf("%s has no value", key)
		}
		var err error
		switch key {
		case "NodeName":
			if names, err = hostlist.Expand(v); err != nil {
				return fmt.Errorf("NodeName: %w", err)
			}
		case "Features":
			for _, feat := range strings.Split(v, ",") {
				if !validFeature(feat) {
					//lint:ignore ST1005 the line starts with the key, spelled as in corral.conf
					return fmt.Errorf("Features: %q is not a feature name (letters, digits, '_', '-', '.' and ':')", feat)
				}
				list = append(list, feat)
			}
		}
	}
	if !given["Features"] {
		return fmt.Errorf("NodeName=%s has no Features= (the one setting a NodeName line takes)", strings.Join(names, ","))
	}
	for _, n := range names {
		if _, dup := features[n]; dup {
			return fmt.Errorf("node %s already has its features on another line", n)
		}
		features[n] = list
	}
	return nil
}

func validFeature(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_-.:", c) >= 0) {
			return false
		}
	}
	return true
}
