// Package cli is the `corral` command line: submit, queue, show job,
// cancel, nodes and dev. It talks to the controller only through
// api.Client; sbatch option syntax lives in package jobspec.
//
// Every failure is one line on stderr, prefixed "corral <command>: ", with
// exit status 2 for bad usage or input and 1 for an operation that failed
// (unreachable controller included). Usage text is printed for --help only.
package cli
