package shim_test

import (
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/noded/shim"
)

// TestBatchLayoutEnvironment: the batch step's Slurm variables follow
// sbatch's (issue 13): node lists in hostlist form, per-node counts
// compressed, SLURM_NTASKS from -n or nodes x --ntasks-per-node,
// SLURM_CPUS_PER_TASK only with -c. "-" means the variable is absent.
func TestBatchLayoutEnvironment(t *testing.T) {
	two := []string{"dev1", "dev2"}
	tests := []struct {
		name string
		node string
		l    api.LaunchRequest
		want map[string]string
	}{
		{"one node, nothing given, old controller", "n1", api.LaunchRequest{CPUs: 4, NodeList: []string{"n1"}},
			map[string]string{"SLURM_NTASKS": "1", "SLURM_NPROCS": "1", "SLURM_CPUS_PER_TASK": "4", "SLURM_TASKS_PER_NODE": "1",
				"SLURM_JOB_CPUS_PER_NODE": "4", "SLURM_JOB_NODELIST": "n1", "SLURM_NODELIST": "n1", "SLURM_NNODES": "1",
				"SLURM_JOB_NUM_NODES": "1", "SLURMD_NODENAME": "n1", "SLURM_NODEID": "0", "SLURM_PROCID": "0", "SLURM_LOCALID": "0",
				"SLURM_NTASKS_PER_NODE": "-", "SLURM_SUBMIT_HOST": "-", "SLURM_CLUSTER_NAME": "-"}},
		{"one node, no -c, new controller", "n1", api.LaunchRequest{CPUs: 4, NodeList: []string{"n1"}, Role: api.RoleBatch},
			map[string]string{"SLURM_CPUS_PER_TASK": "-", "SLURM_NTASKS": "1", "SLURM_CPUS_ON_NODE": "4"}},
		{"two nodes, --ntasks-per-node=2 -c 3", "dev2", api.LaunchRequest{CPUs: 6, NodeList: two, NtasksPerNode: 2, CPUsPerTask: 3,
			Role: api.RoleBatch, SubmitHost: "login1", ClusterName: "corral"},
			map[string]string{"SLURM_NTASKS": "4", "SLURM_NPROCS": "4", "SLURM_TASKS_PER_NODE": "2(x2)", "SLURM_NTASKS_PER_NODE": "2",
				"SLURM_CPUS_PER_TASK": "3", "SLURM_JOB_CPUS_PER_NODE": "6(x2)", "SLURM_JOB_NODELIST": "dev[1-2]", "SLURM_NODELIST": "dev[1-2]",
				"SLURM_NNODES": "2", "SLURM_JOB_NUM_NODES": "2", "SLURMD_NODENAME": "dev2", "SLURM_NODEID": "1",
				"SLURM_SUBMIT_HOST": "login1", "SLURM_CLUSTER_NAME": "corral", "SLURM_PROCID": "0"}},
		{"-N2 -n3: block", "dev1", api.LaunchRequest{CPUs: 2, NodeList: two, Ntasks: 3, Role: api.RoleBatch},
			map[string]string{"SLURM_NTASKS": "3", "SLURM_TASKS_PER_NODE": "2,1", "SLURM_NODEID": "0", "SLURM_NTASKS_PER_NODE": "-"}},
		{"-N2, nothing else: one task per node", "dev1", api.LaunchRequest{CPUs: 1, NodeList: two, Role: api.RoleBatch},
			map[string]string{"SLURM_NTASKS": "2", "SLURM_TASKS_PER_NODE": "1(x2)"}},
		{"--open-mode=append reaches the job's sruns", "n1", api.LaunchRequest{CPUs: 1, OpenMode: "append"},
			map[string]string{"SLURM_OPEN_MODE": "a"}},
		{"--open-mode=truncate", "n1", api.LaunchRequest{CPUs: 1, OpenMode: "truncate"},
			map[string]string{"SLURM_OPEN_MODE": "t"}},
		{"no --open-mode", "n1", api.LaunchRequest{CPUs: 1}, map[string]string{"SLURM_OPEN_MODE": "-"}},
		// Counts follow the node list's hostlist order, as Slurm prints them.
		{"the controller's layout wins", "dev2", api.LaunchRequest{CPUs: 2, NodeList: []string{"dev2", "dev1", "dev3"}, Ntasks: 5,
			TasksPerNode: []int{1, 2, 2}, CPUsPerNode: []int{2, 4, 4}},
			map[string]string{"SLURM_NTASKS": "5", "SLURM_TASKS_PER_NODE": "2,1,2", "SLURM_JOB_CPUS_PER_NODE": "4,2,4",
				"SLURM_JOB_NODELIST": "dev[1-3]", "SLURM_NODEID": "1", "SLURM_CPUS_PER_TASK": "-"}},
	}
	for _, tc := range tests {
		env := map[string]string{}
		for _, kv := range shim.Environment(&shim.Job{Launch: tc.l, Node: tc.node}) {
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
