package slurmfmt

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
)

// sacct prints a job's steps under its allocation line: JOB.batch,
// JOB.extern, then srun's JOB.0, JOB.1, ... A step line fills the fields
// Slurm 22.05's sacct fills for a step (print.c's JOBSTEP cases) from
// the step's own record; the job's fields that steps lack (Partition,
// User, UID, Group, Timelimit, ReqMem, WorkDir, ...) are empty, as there.

// acctStepFields are the values of the fields a step line fills.
var acctStepFields = map[string]func(r *AcctRow, st *api.Step, e *Env) string{
	"Account":    func(r *AcctRow, _ *api.Step, _ *Env) string { return r.Rec.Account },
	"AllocCPUS":  func(_ *AcctRow, st *api.Step, _ *Env) string { return strconv.Itoa(stepCPUs(st)) },
	"AllocNodes": func(_ *AcctRow, st *api.Step, _ *Env) string { return strconv.Itoa(len(st.Nodes)) },
	"AllocTRES":  func(r *AcctRow, st *api.Step, _ *Env) string { return stepTRES(r, st) },
	"AveRSS": func(_ *AcctRow, st *api.Step, e *Env) string {
		return e.memSize(st.PeakMemBytes / int64(max(st.Tasks, 1)))
	},
	"CPUTime":    func(_ *AcctRow, st *api.Step, e *Env) string { return Clock(stepElapsed(st, e) * int64(stepCPUs(st))) },
	"CPUTimeRAW": func(_ *AcctRow, st *api.Step, e *Env) string { return itoa64(stepElapsed(st, e) * int64(stepCPUs(st))) },
	"Elapsed":    func(_ *AcctRow, st *api.Step, e *Env) string { return Clock(stepElapsed(st, e)) },
	"ElapsedRaw": func(_ *AcctRow, st *api.Step, e *Env) string { return itoa64(stepElapsed(st, e)) },
	"Eligible":   func(_ *AcctRow, st *api.Step, e *Env) string { return e.stamp(&st.Start, "Unknown") },
	"End":        func(_ *AcctRow, st *api.Step, e *Env) string { return e.stamp(st.End, "Unknown") },
	"ExitCode":   func(_ *AcctRow, st *api.Step, _ *Env) string { return fmt.Sprintf("%d:%d", st.ExitCode, st.Signal) },
	"JobID": func(r *AcctRow, st *api.Step, _ *Env) string {
		return AcctJobID(&r.Rec) + "." + api.StepName(st.StepID)
	},
	"JobIDRaw": func(r *AcctRow, st *api.Step, _ *Env) string {
		return strconv.FormatUint(r.Rec.JobID, 10) + "." + api.StepName(st.StepID)
	},
	"JobName":  func(_ *AcctRow, st *api.Step, _ *Env) string { return st.Name },
	"MaxRSS":   func(_ *AcctRow, st *api.Step, e *Env) string { return e.memSize(st.PeakMemBytes) },
	"NCPUS":    func(_ *AcctRow, st *api.Step, _ *Env) string { return strconv.Itoa(stepCPUs(st)) },
	"NNodes":   func(_ *AcctRow, st *api.Step, _ *Env) string { return strconv.Itoa(len(st.Nodes)) },
	"NodeList": func(_ *AcctRow, st *api.Step, _ *Env) string { return nodeList(st.Nodes) },
	"NTasks":   func(_ *AcctRow, st *api.Step, _ *Env) string { return strconv.Itoa(st.Tasks) },
	"ReqCPUS":  func(_ *AcctRow, st *api.Step, _ *Env) string { return strconv.Itoa(stepCPUs(st)) },
	"ReqNodes": func(_ *AcctRow, st *api.Step, _ *Env) string { return strconv.Itoa(len(st.Nodes)) },
	"Start":    func(_ *AcctRow, st *api.Step, e *Env) string { return e.stamp(&st.Start, "Unknown") },
	"State":    func(_ *AcctRow, st *api.Step, _ *Env) string { return cancelledBy(st.State, st.CancelledBy) },
	"Submit":   func(_ *AcctRow, st *api.Step, e *Env) string { return e.stamp(&st.Start, "Unknown") },
	"TotalCPU": func(_ *AcctRow, st *api.Step, _ *Env) string { return CPUTime(st.CPUTimeUsec) },
}

// WithSteps puts each row's steps (its record's Steps) on lines of their
// own right after it, as sacct lists a job and then its steps.
func WithSteps(rows []AcctRow) []AcctRow {
	n := len(rows)
	for i := range rows {
		n += len(rows[i].Rec.Steps)
	}
	out := make([]AcctRow, 0, n)
	for i := range rows {
		out = append(out, rows[i])
		for k := range rows[i].Rec.Steps {
			out = append(out, AcctRow{Rec: rows[i].Rec, Job: rows[i].Job, Step: &rows[i].Rec.Steps[k]})
		}
	}
	return out
}

// stepCPUs are the CPUs a step holds: its tasks' CPUs.
func stepCPUs(st *api.Step) int { return st.Tasks * max(st.CPUsPerTask, 1) }

// stepElapsed is a step's run time in seconds, until now while it runs.
func stepElapsed(st *api.Step, e *Env) int64 {
	end := e.Now
	if st.End != nil {
		end = *st.End
	}
	return int64(max(end.Sub(st.Start), 0) / time.Second)
}

// stepTRES is a step's AllocTRES: cpu, mem (the job's per node, on each
// of the step's nodes, when the job's record is at hand), node.
func stepTRES(r *AcctRow, st *api.Step) string {
	parts := []string{"cpu=" + strconv.Itoa(stepCPUs(st))}
	if r.Job != nil && r.Job.MemBytes > 0 {
		parts = append(parts, "mem="+MemMB(r.Job.MemBytes*int64(len(st.Nodes))))
	}
	return strings.Join(append(parts, "node="+strconv.Itoa(len(st.Nodes))), ",")
}

// derivedExitCode is the highest exit of the job's srun steps, as Slurm
// keeps it: compared as wait statuses, so any exit code beats a signal.
func derivedExitCode(r *AcctRow) string {
	code, sig, best := 0, 0, -1
	for i := range r.Rec.Steps {
		st := &r.Rec.Steps[i]
		if st.StepID < 0 || st.State == api.StateRunning {
			continue
		}
		if raw := st.ExitCode<<8 | st.Signal; raw > best {
			code, sig, best = st.ExitCode, st.Signal, raw
		}
	}
	return fmt.Sprintf("%d:%d", code, sig)
}

// acctState is a job line's State: "CANCELLED by UID" when someone's
// cancel ended it.
func acctState(r *AcctRow) string { return cancelledBy(r.Rec.State, r.Rec.CancelledBy) }

// cancelledBy is state as sacct prints a job's or a step's: with the
// uid whose cancel ended it, when one did.
func cancelledBy(state api.JobState, by *uint32) string {
	if state == api.StateCancelled && by != nil {
		return fmt.Sprintf("%s by %d", state, *by)
	}
	return string(state)
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
