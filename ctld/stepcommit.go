package ctld

import (
	"slices"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
)

// The queue's side of job steps: it loads the running steps, hands out
// step IDs, commits step records and, when a job stops running, decides
// in the same transaction as the job (store.Update.Steps) what becomes of
// its running steps. A step's state is its own, as in Slurm: a job that
// ends (its script exits, its time limit, a cancel) has its nodes kill
// the steps still running, and each such step stays RUNNING, marked with
// its job's end (store.StepRecord.JobEnd, durable), until every node of
// it reported, and then ends with the state the reports give
// (stepVerdict). A node lost meanwhile counts as NODE_FAIL; a node silent
// for stepEndWait after the job's end counts as CANCELLED, so no step
// stays RUNNING forever. A job that ends NODE_FAIL or is requeued ends
// its steps at once. Records are replaced, never changed in place, once
// installed: views copy them under the read lock.

// jobSteps are a job's steps as the queue keeps them: the running ones by
// ID (those waiting for their nodes after the job's end too), and the
// highest ID handed out.
type jobSteps struct {
	running map[int]*store.StepRecord
	last    int  // -1: none yet (batch and extern are negative)
	known   bool // last was read from the store
}

// loadSteps attaches the stored running steps to their jobs. A running
// step of a job that is not running is one waiting for its nodes after
// the job's end (JobEnd); one without that mark, which no commit writes,
// is ended here, CANCELLED.
func (q *queue) loadSteps(now time.Time) error {
	recs, err := q.store.RunningSteps()
	if err != nil {
		return err
	}
	var stray []*store.StepRecord
	for _, rec := range recs {
		j := q.jobs[rec.Step.JobID]
		if j == nil || (!j.state().Holds() && rec.JobEnd == nil) {
			stray = append(stray, endedStep(rec, api.StateCancelled, now))
			continue
		}
		j.steps.install(rec)
		q.noteClosing(j)
	}
	if len(stray) == 0 {
		return nil
	}
	return q.store.PutSteps(stray...)
}

// install makes rec the step's current record.
func (js *jobSteps) install(rec *store.StepRecord) {
	id := rec.Step.StepID
	if js.known && id > js.last {
		js.last = id
	}
	if rec.Step.State.Terminal() {
		delete(js.running, id)
		return
	}
	if js.running == nil {
		js.running = make(map[int]*store.StepRecord)
	}
	js.running[id] = rec
}

// nextStepID is the ID j's next step gets; the caller holds Server.mu for
// writing and commits the step before it asks again.
func (q *queue) nextStepID(j *job) (int, error) {
	if !j.steps.known {
		last, err := q.store.LastStepID(j.rec.Job.ID)
		if err != nil {
			return 0, err
		}
		j.steps.last, j.steps.known = last, true
	}
	return j.steps.last + 1, nil
}

// commitSteps persists step records and, once they are on disk, installs
// them. The caller holds Server.mu for writing.
func (q *queue) commitSteps(recs ...*store.StepRecord) error {
	if err := q.store.PutSteps(recs...); err != nil {
		return err
	}
	q.installSteps(recs)
	return nil
}

func (q *queue) installSteps(recs []*store.StepRecord) {
	for _, rec := range recs {
		if j := q.jobs[rec.Step.JobID]; j != nil {
			j.steps.install(rec)
			q.noteClosing(j)
		}
	}
}

// stepsEnding adds to steps (records a commit writes) what becomes of the
// running steps of every job the changes take out of RUNNING: ended
// NODE_FAIL with a job that ended so, CANCELLED with a job requeued (its
// next run starts with no step), else marked with the job's end to wait
// for their nodes' reports. A step that steps already ends keeps that
// end; one it changes is replaced in place.
func stepsEnding(changes []change, steps []*store.StepRecord, now time.Time) []*store.StepRecord {
	type key struct {
		job  uint64
		step int
	}
	var written map[key]int
	for _, c := range changes {
		if !c.j.state().Holds() || c.next.Job.State.Holds() || len(c.j.steps.running) == 0 {
			continue
		}
		if written == nil {
			written = make(map[key]int, len(steps))
			for i, r := range steps {
				written[key{r.Step.JobID, r.Step.StepID}] = i
			}
		}
		jobEnd := c.next.Job.State
		end := now
		if c.next.Job.EndTime != nil {
			end = *c.next.Job.EndTime
		}
		for _, id := range sortedStepIDs(c.j.steps.running) {
			rec := c.j.steps.running[id]
			i, ok := written[key{rec.Step.JobID, id}]
			if ok {
				rec = steps[i]
			}
			if rec.Step.State.Terminal() || rec.JobEnd != nil {
				continue
			}
			var next *store.StepRecord
			switch jobEnd {
			case api.StateNodeFail:
				next = endedStep(rec, api.StateNodeFail, end)
			case api.StatePending: // requeued
				next = endedStep(rec, api.StateCancelled, end)
			default:
				next = cloneStep(rec)
				next.JobEnd = &store.StepJobEnd{State: jobEnd, At: end}
			}
			if ok {
				steps[i] = next
			} else {
				steps = append(steps, next)
			}
		}
	}
	return steps
}

func sortedStepIDs(m map[int]*store.StepRecord) []int {
	ids := make([]int, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// endedStep is rec ended in state st at end, its nodes' reports so far
// counted in.
func endedStep(rec *store.StepRecord, st api.JobState, end time.Time) *store.StepRecord {
	next := cloneStep(rec)
	tallyReports(next)
	finishStep(&next.Step, st, end)
	return next
}

// finishStep ends a step in state at end. A step's state is its own, not
// its job's: package lifecycle rules jobs only.
func finishStep(st *api.Step, state api.JobState, end time.Time) {
	st.State, st.End = state, &end
}

func cloneStep(rec *store.StepRecord) *store.StepRecord {
	next := *rec
	next.Reports = slices.Clone(rec.Reports)
	next.Step.End = nil
	if rec.Step.End != nil {
		end := *rec.Step.End
		next.Step.End = &end
	}
	return &next
}

// stepAfterReport is rec after its node's end report r, or nil when the
// report changes nothing: delivery is at least once, so a report for an
// ended step, from a node not in the step or one that reported already is
// ignored. Once every node reported, the step ends at at, in the state
// stepVerdict gives.
func stepAfterReport(rec *store.StepRecord, r store.StepNodeEnd, at time.Time) *store.StepRecord {
	if rec.Step.State.Terminal() ||
		!slices.ContainsFunc(rec.Layout, func(n api.StepNode) bool { return n.Node == r.Node }) ||
		slices.ContainsFunc(rec.Reports, func(e store.StepNodeEnd) bool { return e.Node == r.Node }) {
		return nil
	}
	next := cloneStep(rec)
	next.Reports = append(next.Reports, r)
	if len(next.Reports) < len(next.Layout) {
		return next
	}
	tallyReports(next)
	finishStep(&next.Step, stepVerdict(next), at)
	return next
}

// stepVerdict is the state of a step every node of which reported, its
// reports tallied. As Slurm's accounting (as_mysql_step_complete) keeps
// a step's state, by its highest wait status: an exit code is FAILED, a
// signal CANCELLED whoever sent it (so a step its job's end killed does
// not depend on how soon its node saw the container go), 0 COMPLETED.
// Before that: CANCELLED when the step was cancelled (scancel JOB.STEP),
// NODE_FAIL when a node was lost, OUT_OF_MEMORY (0:125) when a node's
// part had OOM kills and no node an exit code; after it, with every task
// at 0, FAILED
// when a node says so (tasks that could not start) and CANCELLED when a
// node says its tasks were stopped without a status of theirs (a runner
// killed at its job's end, or a part counted over by ctld). Tasks that
// caught their job's end's SIGTERM and exited 0 are COMPLETED, as in
// Slurm: their nodes say so (noded's stepNodeState).
func stepVerdict(rec *store.StepRecord) api.JobState {
	said := func(st api.JobState) bool {
		return slices.ContainsFunc(rec.Reports, func(e store.StepNodeEnd) bool { return e.State == st })
	}
	switch {
	case rec.CancelRequested:
		return api.StateCancelled
	case said(api.StateNodeFail) || slices.ContainsFunc(rec.Reports, func(e store.StepNodeEnd) bool { return e.Lost }):
		return api.StateNodeFail
	case rec.Step.ExitCode == 0 && rec.Step.Signal == oomSignal && said(api.StateOutOfMemory):
		return api.StateOutOfMemory
	case rec.Step.ExitCode != 0 || (said(api.StateFailed) && rec.Step.Signal == 0):
		return api.StateFailed
	case rec.Step.Signal != 0 || said(api.StateCancelled):
		return api.StateCancelled
	}
	return api.StateCompleted
}

// oomSignal is the "signal" of an OUT_OF_MEMORY step's exit code,
// sacct's 0:125: Slurm's nodes send SIG_OOM (253) as the status of a
// step with OOM kills, which reads as a wait status signalled by 125.
const (
	oomSignal = 125
	oomStatus = 253
)

// tallyReports sums the nodes' reports into the step: CPU time summed,
// the highest peak memory, and the exit code as Slurm keeps a step's, the
// highest wait status of its nodes: any exit code beats a signal, and a
// signalled end is exit code 0 with the signal (sacct's "0:15"; a node
// reports 128+signal). A node whose part had OOM kills counts Slurm's
// SIG_OOM, which beats a signal but not an exit code.
func tallyReports(rec *store.StepRecord) {
	st := &rec.Step
	st.ExitCode, st.Signal, st.CPUTimeUsec, st.PeakMemBytes = 0, 0, 0, 0
	best := 0
	for _, r := range rec.Reports {
		code, sig, raw := r.ExitCode, 0, r.ExitCode<<8
		switch {
		case r.State == api.StateOutOfMemory:
			code, sig, raw = 0, oomSignal, oomStatus
		case r.Signal != 0:
			code, sig, raw = 0, r.Signal, r.Signal
		}
		if raw > best {
			st.ExitCode, st.Signal, best = code, sig, raw
		}
		st.CPUTimeUsec += r.CPUTimeUsec
		st.PeakMemBytes = max(st.PeakMemBytes, r.PeakMemBytes)
	}
}
