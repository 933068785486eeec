package api

// A job that ran has, besides srun's steps, the parts every node held:
// the batch script on its first node (JOB.batch) and the allocation held
// on each node (JOB.extern), which Slurm's accounting lists as steps of
// their own. corral keeps them in the job's record (its start, end, exit
// and the batch node's measured CPU time and peak memory), so their step
// records are derived from it, the same way wherever they are shown.

// PartSteps are j's batch and extern steps as accounting shows them: none
// before it started; no batch step for an allocation (salloc's, srun's
// outside one), whose work runs as srun steps.
func (j *Job) PartSteps() []Step {
	if j.StartTime == nil || len(j.Nodes) == 0 {
		return nil
	}
	var out []Step
	if !j.Spec.Allocation {
		b := Step{JobID: j.ID, StepID: StepBatch, Name: "batch", State: batchState(j.State),
			Nodes: j.Nodes[:1:1], Tasks: 1, TasksPerNode: []int{1}, CPUsPerTask: j.CPUs,
			Start: *j.StartTime, End: j.EndTime, Signal: j.Signal,
			CPUTimeUsec: j.CPUTimeUsec, PeakMemBytes: j.PeakMemBytes}
		if j.ExitCode != nil {
			b.ExitCode = *j.ExitCode
		}
		out = append(out, b)
	}
	perNode := make([]int, len(j.Nodes))
	for i := range perNode {
		perNode[i] = 1
	}
	e := Step{JobID: j.ID, StepID: StepExtern, Name: "extern", State: externState(j.State),
		Nodes: j.Nodes, Tasks: len(j.Nodes), TasksPerNode: perNode, CPUsPerTask: j.CPUs,
		Start: *j.StartTime, End: j.EndTime}
	return append(out, e)
}

// batchState is the batch step's state for its job's: a script stopped
// at the time limit was cancelled (the job, not the script, timed out).
func batchState(job JobState) JobState {
	if job == StateTimeout {
		return StateCancelled
	}
	return job
}

// externState is the extern step's: it holds no work of its own, so it
// ends COMPLETED however the job ends, unless its node was lost.
func externState(job JobState) JobState {
	switch job {
	case StateRunning, StateNodeFail:
		return job
	}
	return StateCompleted
}
