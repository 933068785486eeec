package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSlim holds corral-slurm to what makes it start faster than corral:
// built as the Makefile builds it (the slurmonly tag), it must link none
// of corral's own commands' dependencies. A file of package cli that
// imports one of these without the `//go:build !slurmonly` line fails here.
func TestSlim(t *testing.T) {
	// go test puts its own go first on PATH.
	out, err := exec.Command("go", "list", "-deps", "-tags", "slurmonly", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps -tags slurmonly: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !contains(deps, "github.com/corral-hpc/corral/cli") || !contains(deps, "net/http") {
		t.Fatalf("go list -deps lists neither the cli package nor net/http: %q", deps)
	}
	for _, heavy := range []string{
		"github.com/urfave/cli/v2",                // corral's command tree and help templates
		"text/template",                           // urfave/cli's help
		"github.com/mattn/go-runewidth",           // corral's tables (width tables at init)
		"go.etcd.io/bbolt",                        // corral admin backup
		"github.com/corral-hpc/corral/sim",        // corral sim
		"github.com/corral-hpc/corral/ctld/store", // corral admin
	} {
		if contains(deps, heavy) {
			t.Errorf("corral-slurm links %s; tag the cli file that imports it //go:build !slurmonly", heavy)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
