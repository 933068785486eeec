// Command corral-slurm is the Slurm names alone (bin/slurm/squeue and the
// others are links to it): built with the slurmonly tag, package cli
// leaves out corral's own commands and urfave/cli, so the commands that
// pipelines call in loops start a smaller binary (docs/benchmarks.md).
// Called by its own name, it runs the Slurm command named by its first
// argument: corral-slurm squeue -h.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/corral-hpc/corral/cli"
)

func main() {
	name, args := filepath.Base(os.Args[0]), os.Args[1:]
	if !cli.IsSlurmName(name) && len(args) > 0 && cli.IsSlurmName(args[0]) {
		name, args = args[0], args[1:]
	}
	if !cli.IsSlurmName(name) {
		fmt.Fprintf(os.Stderr, "%s: call it by a Slurm command's name (a link named sbatch, squeue, ...) or give that name first: %s squeue -h\n  commands: %s\n",
			name, name, strings.Join(cli.SlurmNames(), " "))
		os.Exit(2)
	}
	os.Exit(cli.RunSlurm(context.Background(), name, args, os.Stdin, os.Stdout, os.Stderr))
}
