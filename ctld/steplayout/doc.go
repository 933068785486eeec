// Package steplayout decides where a job step's tasks run: given a
// running job's allocation, the CPUs its running steps hold and srun's
// StepRequest, it returns the step's nodes with their ranks and CPUs, or
// the refusal srun prints. It is pure: no clock, lock or store; the
// controller supplies the allocation and persists the result.
//
// The rules are Slurm 22.05's for a step inside an allocation (srun(1)),
// applied to what arrives. srun itself turns the environment into a
// request, as Slurm's does: inside a batch script it sends SLURM_NTASKS as
// Ntasks when -n is not given. A zero field here means "neither given".
//
// Nodes the step may use (candidates), in the job's node order:
//   - -r/--relative n: the job's nodes from index n on (0 is the first);
//     not allowed with -w or -x.
//   - -w/--nodelist: every listed node is used; each must belong to the
//     job. -x/--exclude: listed nodes are not used (names outside the job
//     are ignored, as Slurm does).
//
// How many nodes (k) and tasks (n):
//   - -N given: k = N, lowered to n when fewer tasks are asked (Slurm's
//     "nodes reduced to match the number of tasks"). Not given: k is the
//     number of -w nodes when -w is given, else every candidate (Slurm's
//     inherited SLURM_NNODES), lowered to n when -n asks fewer.
//   - -n given: n tasks; --ntasks-per-node is then a maximum per node.
//     Not given: k × --ntasks-per-node, else one task per node.
//   - Every node of the step gets at least one task.
//
// CPUs, and steps running side by side:
//   - -c (default 1) is CPUs per task; a node holds at most
//     CPUs/-c tasks (and GPUs/--gpus-per-task with --gpus-per-task).
//   - Without --exact a step is given every CPU of the job on each of its
//     nodes; with --exact (--exclusive inside an allocation is the same,
//     and an explicit -c implies it) only its tasks × -c.
//   - A step without --overlap needs its CPUs free of the other steps
//     without --overlap: a step without --exact needs its nodes wholly
//     free. A step with --overlap shares everything, and others share
//     with it (its CPUs are never held).
//   - When the step needs fewer nodes than the candidates, it takes the
//     -w nodes and then the first candidates in job order with room for
//     it now; if those cannot hold its tasks, the roomiest ones.
//
// Task placement (-m): the number of tasks per node is dealt round-robin
// over the step's nodes, each node up to what it holds (so 4 tasks on 3
// nodes are 2,1,1); block (the default, "*") numbers them node by node
// (0,1 | 2 | 3), cyclic deals the numbers round-robin (0,3 | 1 | 2). Only
// the part before the first ':' or ',' matters: corral does not bind
// tasks to sockets or cores. plane and arbitrary are refused.
//
// Where corral differs from Slurm: --mem and --gpus-per-task are checked
// against the job's share of each node but not held between steps (every
// step runs in the job's own cgroup, so the job's limits bind them all);
// a step that does not fit now is refused at once with "Requested nodes
// are busy" (fault.Conflict) for srun to retry, where Slurm's controller
// queues it.
//
// Refusals are fault errors whose text is what srun prints after
// "srun: error: ", with Slurm's words: "Unable to create step for job N:
// More processors requested than permitted". fault.Invalid: the step can
// never run in this allocation; fault.Conflict: it cannot run now.
package steplayout
