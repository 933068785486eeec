// Package jobspec turns sbatch-style options and #SBATCH script directives
// into an api.JobSpec.
//
// It owns the option table (one entry per option, used for both the command
// line and directives), the size and time-limit syntaxes shared with the
// daemons (ParseSize, ParseTimeLimit, FormatDuration) and the output-file
// patterns (ExpandPattern). It does no I/O of its own: callers hand it the
// arguments and a function that reads the script.
package jobspec
