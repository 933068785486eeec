// Package jobspec turns sbatch-style options and #SBATCH script directives
// into an api.JobSpec.
//
// It owns the option table (table.go: one row per sbatch option, used for
// the command line, directives, help, completion and docs), the value
// syntaxes of those options (--array, --dependency, --begin, --export,
// --signal, --gres, sizes, time limits), the output-file patterns
// (ExpandPattern) and the rule that turns task, CPU, GPU and memory
// options into per-node totals. It does no I/O of its own: callers hand it
// the arguments, a function that reads the script and the current time.
//
// Every sbatch option is either supported (parsed into the spec or the
// Request) or accepted with a one-line warning saying why corral ignores
// it; an option sbatch does not know is an error.
//
// # How resources combine
//
// Nodes is -N (the minimum of a range), or ceil(ntasks / ntasks-per-node)
// when only -n and --ntasks-per-node are given, else 1. With -n the tasks
// are spread evenly: tasks per node = ceil(ntasks / nodes), which must not
// exceed --ntasks-per-node; without -n, tasks per node is
// --ntasks-per-node, else 1. Then
//
//	CPUs per node = cpus-per-task (default 1) x tasks per node
//	              = cpus-per-gpu x GPUs per node, with --cpus-per-gpu
//	              raised to --mincpus if that is more
//	GPUs per node = --gpus-per-node, else --gres gpu counts,
//	              else gpus-per-task x tasks per node,
//	              else ceil(--gpus / nodes)
//	memory per node = --mem, or mem-per-cpu x CPUs per node,
//	              or mem-per-gpu x GPUs per node
//
// --mem, --mem-per-cpu and --mem-per-gpu exclude each other, as do
// --cpus-per-task and --cpus-per-gpu, and --gpus-per-node and --gres=gpu.
// corral's --fgpu asks for a fraction of a GPU per node instead of whole
// GPUs and excludes every whole-GPU option; PerNodeGPUs gives the
// controller the whole GPUs per node and their type.
// Without -N, -n 8 asks for all eight tasks on one node; the controller
// spreads them over as many nodes as they need when no node of the
// partition holds them all (ctld's spreadTasks), as Slurm does.
package jobspec
