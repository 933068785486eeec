// Package slurmfmt prints corral's jobs, nodes and partitions in Slurm
// 22.05's formats, so scripts that read squeue, sacct, sinfo and scontrol
// output read corral's: squeue's and sinfo's %-field layouts (width,
// justification, suffixes) and -O field names, sacct's fields with %N
// widths and its parsable forms, scontrol's key=value records, and
// Slurm's spellings of times, durations and states.
//
// It is pure: callers pass the records and the current time, and the
// package does no I/O beyond writing to the io.Writer it is given.
package slurmfmt
