// Package slurmopt parses command lines the way Slurm's commands do, with
// glibc's getopt_long: bundled short options (-hn), a short option's value
// glued or in the next word (-o%i, -o %i), long options with = or the next
// word (--format=x, --format x), unique prefixes of long options (--form),
// options and arguments in any order (GNU permutation) unless the command
// stops at its first argument, and -- ending the options. Its error
// messages are glibc's words, so a corral command under a Slurm name fails
// the way the Slurm command would.
package slurmopt
