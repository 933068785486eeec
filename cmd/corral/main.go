// Command corral is the user's command line for a corral cluster. Called
// by a Slurm command's name (bin/slurm/squeue is a link to it), it is
// that command, with Slurm's options and output formats.
package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/corral-hpc/corral/cli"
)

func main() {
	if name := filepath.Base(os.Args[0]); cli.IsSlurmName(name) {
		os.Exit(cli.RunSlurm(context.Background(), name, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(cli.Run(context.Background(), cli.App(), os.Args))
}
