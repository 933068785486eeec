// Package cli is the `corral` command line: submit, queue, show job,
// cancel, nodes and dev. It talks to the controller only through
// api.Client; sbatch option syntax lives in package jobspec.
//
// Every failure is one line on stderr, prefixed "corral <command>: ", with
// exit status 2 for bad usage or input and 1 for an operation that failed
// (unreachable controller included). Usage text is printed for --help only.
//
// The Slurm names (slurm.go, sbatch.go, squeue.go, ...) are also built
// alone, as cmd/corral-slurm, with the slurmonly build tag: every file of
// corral's own commands, and every file that imports urfave/cli or
// another package only they need, starts with `//go:build !slurmonly`.
// Code both share lives in files without the tag (errors.go,
// filterargs.go, submit.go, ...); cmd/corral-slurm's TestSlim fails when
// a heavy package creeps back in.
package cli
