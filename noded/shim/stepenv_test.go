package shim_test

import (
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/noded/shim"
)

// TestTaskEnv: each task's Slurm and framework variables, over srun's
// environment (whose batch-step values, SLURM_PROCID=0 and the like, are
// replaced, each variable once). "-" means absent.
func TestTaskEnv(t *testing.T) {
	srunEnv := []string{"PATH=/usr/bin:/bin", "SLURM_JOB_NODELIST=dev[1-2]", "SLURM_PROCID=0", "SLURM_NTASKS=1",
		"CUDA_VISIBLE_DEVICES=7", "KEEP=me"}
	twoByTwo := []api.StepNode{{Node: "dev1", Ranks: []int{0, 1}, CPUs: 4}, {Node: "dev2", Ranks: []int{2, 3}, CPUs: 2}}
	uneven := []api.StepNode{{Node: "n2", Ranks: []int{0, 1}}, {Node: "n10", Ranks: []int{2, 3}}, {Node: "n3", Ranks: []int{4}}}
	tests := []struct {
		name        string
		layout      []api.StepNode
		node        string
		nodeID      int
		rank, local int
		tasks       int
		port        int
		gpu         *shim.GPUSetup
		want        map[string]string
	}{
		{name: "2 nodes x 2 tasks, last rank", layout: twoByTwo, node: "dev2", nodeID: 1, rank: 3, local: 1, tasks: 4, port: 29500,
			gpu: &shim.GPUSetup{Env: []string{"CUDA_VISIBLE_DEVICES=0,1", "CORRAL_FGPU=2"}},
			want: map[string]string{
				"SLURM_PROCID": "3", "SLURM_LOCALID": "1", "SLURM_NODEID": "1", "SLURM_NTASKS": "4", "SLURM_NPROCS": "4",
				"SLURM_STEP_ID": "0", "SLURM_STEPID": "0", "SLURM_JOB_ID": "42", "SLURM_JOBID": "42",
				"SLURM_STEP_NODELIST": "dev[1-2]", "SLURM_STEP_NUM_NODES": "2", "SLURM_STEP_NUM_TASKS": "4",
				"SLURM_STEP_TASKS_PER_NODE": "2(x2)", "SLURM_TASKS_PER_NODE": "2(x2)", "SLURM_GTIDS": "2,3",
				"SLURMD_NODENAME": "dev2", "SLURM_LAUNCH_NODE_IPADDR": "10.0.0.5", "SLURM_CPUS_PER_TASK": "1",
				"CUDA_VISIBLE_DEVICES": "0,1", "CORRAL_FGPU": "2",
				"MASTER_ADDR": "dev1", "MASTER_PORT": "29500", "WORLD_SIZE": "4", "RANK": "3", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
				"SLURM_JOB_NODELIST": "dev[1-2]", "KEEP": "me", "PATH": "/usr/bin:/bin",
			}},
		{name: "first rank, no GPUs, no port", layout: twoByTwo, node: "dev1", nodeID: 0, rank: 0, local: 0, tasks: 4,
			want: map[string]string{"SLURM_PROCID": "0", "SLURM_GTIDS": "0,1", "SLURM_CPUS_PER_TASK": "2", "MASTER_PORT": "-",
				"CUDA_VISIBLE_DEVICES": "7", "LOCAL_WORLD_SIZE": "2"}},
		// n3 is the layout's third node and the node list's second.
		{name: "uneven, counts and node IDs in hostlist order", layout: uneven, node: "n3", nodeID: 2, rank: 4, local: 0, tasks: 5,
			want: map[string]string{"SLURM_STEP_NODELIST": "n[2-3,10]", "SLURM_STEP_TASKS_PER_NODE": "2,1,2", "SLURM_NODEID": "1",
				"SLURM_GTIDS": "4", "MASTER_ADDR": "n2", "LOCAL_WORLD_SIZE": "1", "WORLD_SIZE": "5", "SLURM_CPUS_PER_TASK": "-"}},
	}
	for _, tc := range tests {
		var ranks []int
		for _, n := range tc.layout {
			if n.Node == tc.node {
				ranks = n.Ranks
			}
		}
		s := &shim.StepJob{
			Launch: api.StepLaunch{Env: srunEnv, MasterPort: tc.port,
				Credential: api.StepCredential{JobID: 42, StepID: 0, Layout: tc.layout, Tasks: tc.tasks}},
			Node: tc.node, NodeID: tc.nodeID, Ranks: ranks, LaunchNodeIP: "10.0.0.5",
		}
		env := map[string]string{}
		for _, kv := range shim.TaskEnv(&shim.Job{GPU: tc.gpu}, s, tc.rank, tc.local) {
			k, v, _ := strings.Cut(kv, "=")
			if _, dup := env[k]; dup {
				t.Errorf("%s: %s set twice", tc.name, k)
			}
			env[k] = v
		}
		for k, want := range tc.want {
			got, ok := env[k]
			switch {
			case want == "-" && ok:
				t.Errorf("%s: %s=%q, want it unset", tc.name, k, got)
			case want != "-" && got != want:
				t.Errorf("%s: %s=%q, want %q", tc.name, k, got, want)
			}
		}
	}
}
