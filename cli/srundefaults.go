package cli

import (
	"fmt"

	"github.com/corral-hpc/corral/slurmopt"
)

// srunInputEnv are the environment variables Slurm's srun reads as
// options (its INPUT ENVIRONMENT VARIABLES), in the order it applies them:
// SLURM_NTASKS after SLURM_NPROCS so that it wins, and the command line
// after all of them. Inside a batch script they carry the allocation's
// shape (sbatch -n 4 sets SLURM_NTASKS=4, so a plain srun runs 4 tasks).
//
// Left out on purpose: SLURM_JOB_NUM_NODES (ctld spreads a step over the
// whole allocation unless -N says otherwise, which is what Slurm's srun
// ends up asking when the count came from the environment),
// SLURM_JOB_NAME (Slurm ignores it inside an allocation),
// SLURM_MEM_PER_NODE (the job's own size; a step defaults to it anyway),
// SLURM_CPU_BIND and SLURM_EXCLUSIVE (set by Slurm for tasks and jobs, not
// as srun options corral takes).
var srunInputEnv = []struct{ env, option string }{
	{"SLURM_NPROCS", "ntasks"},
	{"SLURM_NTASKS", "ntasks"},
	{"SLURM_NTASKS_PER_NODE", "ntasks-per-node"},
	{"SRUN_CPUS_PER_TASK", "cpus-per-task"},
	{"SLURM_GPUS_PER_TASK", "gpus-per-task"},
	{"SLURM_DISTRIBUTION", "distribution"},
	{"SLURM_EXACT", "exact"},
	{"SLURM_OVERLAP", "overlap"},
	{"SLURM_KILL_BAD_EXIT", "kill-on-bad-exit"},
	{"SLURM_LABELIO", "label"},
	{"SLURM_UNBUFFEREDIO", "unbuffered"},
	{"SLURM_WAIT", "wait"},
	{"SLURM_MPI_TYPE", "mpi"},
	{"SLURM_STDOUTMODE", "output"},
	{"SLURM_STDERRMODE", "error"},
	{"SLURM_STDINMODE", "input"},
	{"SLURM_EXPORT_ENV", "export"},
	{"SRUN_EXPORT_ENV", "export"}, // srun's own, over SLURM_EXPORT_ENV
	{"SLURM_WORKING_DIR", "chdir"},
	{"SLURM_OPEN_MODE", "open-mode"}, // sbatch --open-mode sets it for the job
}

// applyInputEnv sets the options srun takes from its environment; a bad
// value names the variable.
func (cfg *srunConfig) applyInputEnv(getenv func(string) string) error {
	for _, e := range srunInputEnv {
		v := getenv(e.env)
		if v == "" {
			continue
		}
		set := slurmopt.Set{Name: e.option, Value: v, HasValue: true}
		for _, o := range srunOptionTable {
			if o.Long == e.option && o.Arg == slurmopt.NoArg {
				set = slurmopt.Set{Name: e.option} // a flag: any value sets it
			}
		}
		if err := cfg.apply(set); err != nil {
			return fmt.Errorf("$%s: %v", e.env, err)
		}
	}
	return nil
}

// reconcileCounts settles -N, -n and --ntasks-per-node that disagree, as
// Slurm's srun does before it asks (with its warnings): fewer tasks than
// nodes lowers the nodes; a per-node count that does not match the tasks
// over the nodes is dropped.
func (cfg *srunConfig) reconcileCounts() {
	r := &cfg.req
	if r.Nodes == 0 || r.Ntasks == 0 {
		return
	}
	least := r.Nodes // what a range asks at least
	if r.NodesMin > 0 {
		least = r.NodesMin
	}
	switch {
	case r.Ntasks < least:
		cfg.notes = append(cfg.notes, fmt.Sprintf("Warning: can't run %d processes on %d nodes, setting nnodes to %d", r.Ntasks, least, r.Ntasks))
		r.Nodes, r.NodesMin = r.Ntasks, 0
	case r.Ntasks < r.Nodes: // a range's MAX: no more nodes than tasks, silently
		r.Nodes = r.Ntasks
	}
	if r.NtasksPerNode != 0 && r.NtasksPerNode != r.Ntasks/r.Nodes {
		if r.Ntasks > r.NtasksPerNode {
			cfg.notes = append(cfg.notes, fmt.Sprintf("Warning: can't honor --ntasks-per-node set to %d which doesn't match the requested tasks %d with the number of requested nodes %d. Ignoring --ntasks-per-node.", r.NtasksPerNode, r.Ntasks, r.Nodes))
		}
		r.NtasksPerNode = 0
	}
}
