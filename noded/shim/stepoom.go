package shim

import (
	"fmt"
	"log"
	"path/filepath"

	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/container"
)

// A step's tasks are charged to their job's cgroup (there is no cgroup
// per step), so the runner tells an OOM-killed step by the job's OOM kill
// count: read before the tasks start and after the last ended. Slurm
// 22.05's task/cgroup counts the kills in the step's own cgroup and ends
// such a step OUT_OF_MEMORY (exit code 0:125) whatever its tasks'
// statuses. Here a kill may be another step's or the batch script's, so
// it counts as this step's only if the step did not end clean (a task
// ended by a signal or with an exit code: the victim itself, a shell
// that reports its child's SIGKILL as 137, a program whose worker was
// killed); a step whose tasks all exited 0 although a child of one was
// killed is not OUT_OF_MEMORY, where Slurm says it is.

// stepOOMWatch holds the job's count before the step's tasks started.
type stepOOMWatch struct {
	dirs   map[string]string
	before int64
}

// watchOOM reads the job's OOM kill count; nil (no OOM told apart) if it
// cannot be read.
func watchOOM(ctr *container.Running) *stepOOMWatch {
	dirs, err := ctr.CgroupPaths()
	if err != nil {
		log.Printf("the job's cgroup (for its OOM kills): %v", err)
		return nil
	}
	n, err := cgroup.ReadOOMKills(dirs)
	if err != nil {
		log.Printf("the job's OOM kills: %v", err)
		return nil
	}
	return &stepOOMWatch{dirs: dirs, before: n}
}

// kills is how many of the job's OOM kills since watchOOM count as the
// step's, once its tasks ended.
func (w *stepOOMWatch) kills(tasks []TaskResult) int64 {
	if w == nil {
		return 0
	}
	after, err := cgroup.ReadOOMKills(w.dirs)
	if err != nil {
		log.Printf("the job's OOM kills: %v", err)
		return 0
	}
	return stepOOMKills(w.before, after, tasks)
}

// stepOOMKills is the step's share of the job's OOM kills from before
// to after: all of them if a task did not end clean, else none.
func stepOOMKills(before, after int64, tasks []TaskResult) int64 {
	if after <= before {
		return 0
	}
	for _, t := range tasks {
		if t.ExitCode != 0 || t.Signal != 0 {
			return after - before
		}
	}
	return 0
}

// oomMessage is what srun shows for a step with OOM kills, as
// slurmstepd's "Detected 1 oom-kill event(s) in StepId=5.0. Some of your
// processes may have been killed by the cgroup out-of-memory handler."
func oomMessage(n int64, job uint64, step int, node string) string {
	return fmt.Sprintf("corral: error: Detected %d oom-kill event(s) in StepId=%d.%d on %s. Some of your processes may have been killed by the cgroup out-of-memory handler.\n",
		n, job, step, node)
}

// stepsOOMKills sums the OOM kills that the job's step runners on this
// node counted as their steps' (their result.json), so that, as in Slurm
// whose steps have cgroups of their own, a job whose OOM kills were all
// its steps' is not OUT_OF_MEMORY itself (its script went on and exited
// 0: COMPLETED). Read only when the job had OOM kills.
func stepsOOMKills(jobDir string) int64 {
	dirs, _ := filepath.Glob(filepath.Join(jobDir, StepsDir, "*"))
	var n int64
	for _, d := range dirs {
		if r, err := ReadStepResult(d); err == nil {
			n += r.OOMKills
		}
	}
	return n
}
