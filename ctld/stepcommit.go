package ctld

import (
	"slices"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
)

// The queue's side of job steps: it loads the running steps, hands out
// step IDs, commits step records and, when a job stops running, ends its
// running steps in the same transaction as the job (store.Update.Steps),
// so that after a crash no step is RUNNING in a job that is not. Records
// are replaced, never changed in place, once installed: views copy them
// under the read lock.

// jobSteps are a job's steps as the queue keeps them: the running ones by
// ID, and the highest ID handed out.
type jobSteps struct {
	running map[int]*store.StepRecord
	last    int  // -1: none yet (batch and extern are negative)
	known   bool // last was read from the store
}

// loadSteps attaches the stored running steps to their jobs. A running
// step of a job that is not running cannot be written (the job's end ends
// it in the same commit); one found anyway is ended here, CANCELLED.
func (q *queue) loadSteps(now time.Time) error {
	recs, err := q.store.RunningSteps()
	if err != nil {
		return err
	}
	var stray []*store.StepRecord
	for _, rec := range recs {
		j := q.jobs[rec.Step.JobID]
		if j == nil || !j.state().Holds() {
			stray = append(stray, endedStep(rec, api.StateCancelled, now))
			continue
		}
		j.steps.install(rec)
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
		}
	}
}

// stepsEnding adds to steps (records a commit writes) the ends of the
// running steps of every job the changes take out of RUNNING: NODE_FAIL
// when the job ended so, else CANCELLED (or FAILED: stepEndState). A
// step that steps already ends keeps that end.
func stepsEnding(changes []change, steps []*store.StepRecord, now time.Time) []*store.StepRecord {
	type key struct {
		job  uint64
		step int
	}
	var written map[key]*store.StepRecord
	for _, c := range changes {
		if !c.j.state().Holds() || c.next.Job.State.Holds() || len(c.j.steps.running) == 0 {
			continue
		}
		if written == nil {
			written = make(map[key]*store.StepRecord, len(steps))
			for _, r := range steps {
				written[key{r.Step.JobID, r.Step.StepID}] = r
			}
		}
		st := api.StateCancelled
		if c.next.Job.State == api.StateNodeFail {
			st = api.StateNodeFail
		}
		end := now
		if c.next.Job.EndTime != nil {
			end = *c.next.Job.EndTime
		}
		for _, id := range sortedStepIDs(c.j.steps.running) {
			rec := c.j.steps.running[id]
			if w := written[key{rec.Step.JobID, id}]; w != nil {
				if w.Step.State.Terminal() {
					continue
				}
				rec = w
			}
			steps = append(steps, endedStep(rec, stepEndState(rec, st), end))
		}
	}
	return steps
}

// stepEndState is the state a step still running when its job ends gets:
// the job's (CANCELLED, NODE_FAIL), unless a node already reported a
// task of it failed and nobody cancelled it. Then its outcome was decided
// before the job ended (srun ended on an MPI_Abort, say, and the batch
// script after it, before the other nodes' reports arrived): FAILED,
// with the highest exit code reported.
func stepEndState(rec *store.StepRecord, jobEnd api.JobState) api.JobState {
	if jobEnd != api.StateCancelled || rec.CancelRequested {
		return jobEnd
	}
	if slices.ContainsFunc(rec.Reports, func(e store.StepNodeEnd) bool {
		return e.ExitCode != 0 || e.Signal != 0 || e.State == api.StateFailed
	}) {
		return api.StateFailed
	}
	return jobEnd
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
// ignored. Once every node reported, the step ends: CANCELLED when it was
// cancelled, NODE_FAIL when a node was lost, else COMPLETED when every
// task exited 0 and FAILED otherwise (a node's tasks that could not
// start, too), with the highest exit code.
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
	st := api.StateCompleted
	switch {
	case next.CancelRequested:
		st = api.StateCancelled
	case slices.ContainsFunc(next.Reports, func(e store.StepNodeEnd) bool { return e.Lost || e.State == api.StateNodeFail }):
		st = api.StateNodeFail
	case next.Step.ExitCode != 0 || next.Step.Signal != 0 ||
		slices.ContainsFunc(next.Reports, func(e store.StepNodeEnd) bool { return e.State == api.StateFailed }):
		st = api.StateFailed
	}
	finishStep(&next.Step, st, at)
	return next
}

// tallyReports sums the nodes' reports into the step: the highest exit
// code (with its signal), CPU time summed, the highest peak memory.
func tallyReports(rec *store.StepRecord) {
	st := &rec.Step
	st.ExitCode, st.Signal, st.CPUTimeUsec, st.PeakMemBytes = 0, 0, 0, 0
	for _, r := range rec.Reports {
		if r.ExitCode > st.ExitCode || (st.ExitCode == 0 && st.Signal == 0 && r.Signal != 0) {
			st.ExitCode, st.Signal = r.ExitCode, r.Signal
		}
		st.CPUTimeUsec += r.CPUTimeUsec
		st.PeakMemBytes = max(st.PeakMemBytes, r.PeakMemBytes)
	}
}
