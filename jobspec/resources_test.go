package jobspec

import (
	"reflect"
	"testing"
)

// MustParseArgs parses options against a plain script at testNow.
func MustParseArgs(t *testing.T, args ...string) *Request {
	t.Helper()
	r, err := ParseAt(append(args, "job.sh"), newScripts("job.sh", plain).read, testNow)
	if err != nil {
		t.Fatalf("Parse(%q): %v", args, err)
	}
	return r
}

// The per-node totals follow the rule in doc.go.
func TestResourcesCombine(t *testing.T) {
	const G = int64(1) << 30
	for _, tc := range []struct {
		args     []string
		nodes    int
		cpus     int
		mem      int64
		warnings []string
	}{
		{nil, 0, 1, 0, nil},
		{[]string{"-c", "4"}, 0, 4, 0, nil},
		{[]string{"-n", "8"}, 0, 8, 0, nil}, // without -N all tasks share one node
		{[]string{"-n", "8", "-c", "2"}, 0, 16, 0, nil},
		{[]string{"-N", "2", "-n", "8", "-c", "3"}, 2, 12, 0, nil},
		{[]string{"-N", "3", "-n", "8"}, 3, 3, 0, nil}, // ceil(8/3)
		{[]string{"-N", "2", "--ntasks-per-node", "4", "-c", "2"}, 2, 8, 0, nil},
		{[]string{"-n", "10", "--ntasks-per-node", "4"}, 3, 4, 0, nil}, // nodes = ceil(10/4)
		{[]string{"-n", "4", "--ntasks-per-node", "4"}, 0, 4, 0, nil},
		{[]string{"--tasks-per-node=2", "-N2"}, 2, 2, 0, nil},
		{[]string{"-N", "4", "-n", "2"}, 2, 1, 0, []string{"--nodes=4 is more than --ntasks=2; the job gets 2 node(s)"}},
		{[]string{"-N", "2-4", "-c", "2"}, 2, 2, 0, []string{"--nodes=2-4: corral allocates exactly the minimum, 2 node(s)"}},
		{[]string{"--mem-per-cpu=2G", "-c", "4"}, 0, 4, 8 * G, nil},
		{[]string{"--mem-per-cpu=1G", "-N", "2", "-n", "8"}, 2, 4, 4 * G, nil},
		{[]string{"--mincpus=6", "-c", "2"}, 0, 6, 0, nil},
		{[]string{"--mincpus=2", "-c", "4"}, 0, 4, 0, nil},
		{[]string{"--gres=gpu:2", "--cpus-per-gpu=8"}, 0, 16, 0, nil},
		{[]string{"--gpus-per-node=a100:2,v100:1", "--cpus-per-gpu=4", "--mem-per-gpu=10G"}, 0, 12, 30 * G, nil},
		{[]string{"--gpus-per-task=1", "-n", "4", "--cpus-per-gpu=2"}, 0, 8, 0, nil},
		{[]string{"--gpus=8", "-N", "2", "--mem-per-gpu=4G"}, 2, 1, 16 * G, nil},
		{[]string{"--gpus=3", "-N", "2", "--cpus-per-gpu=1"}, 2, 2, 0, nil}, // ceil(3/2) GPUs on each node
		{[]string{"--mem=0"}, 0, 1, 0, nil},                                 // all of each node's memory: MemWholeNode (TestSharingOptions)
	} {
		r := MustParseArgs(t, tc.args...)
		s := r.Spec
		if s.Nodes != tc.nodes || s.CPUs != tc.cpus || s.MemBytes != tc.mem || !reflect.DeepEqual(r.Warnings, tc.warnings) {
			t.Errorf("%q: nodes %d, cpus %d, mem %d, warnings %q; want %d, %d, %d, %q",
				tc.args, s.Nodes, s.CPUs, s.MemBytes, r.Warnings, tc.nodes, tc.cpus, tc.mem, tc.warnings)
		}
	}
}

func TestResourceConflicts(t *testing.T) {
	s := newScripts("mem.sh", "#!/bin/sh\n#SBATCH --mem=4G\nrun\n", "gpu.sh", "#!/bin/sh\n#SBATCH --gres=gpu:1\nrun\n", "job.sh", plain)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mem=1G", "--mem-per-cpu=1G", "job.sh"}, "--mem, --mem-per-cpu and --mem-per-gpu are mutually exclusive (got --mem and --mem-per-cpu)"},
		{[]string{"--mem-per-gpu=1G", "--mem-per-cpu=1G", "--gpus=1", "job.sh"}, "--mem, --mem-per-cpu and --mem-per-gpu are mutually exclusive (got --mem-per-cpu and --mem-per-gpu)"},
		// As in sbatch, the script and the command line count together.
		{[]string{"--mem-per-cpu=1G", "mem.sh"}, "--mem, --mem-per-cpu and --mem-per-gpu are mutually exclusive (got --mem and --mem-per-cpu)"},
		{[]string{"-c", "2", "--cpus-per-gpu=2", "--gpus=1", "job.sh"}, "--cpus-per-task and --cpus-per-gpu are mutually exclusive"},
		{[]string{"--gpus-per-node=2", "gpu.sh"}, "--gpus-per-node and --gres=gpu are mutually exclusive"},
		{[]string{"--cpus-per-gpu=2", "job.sh"}, "--cpus-per-gpu needs GPUs: add --gpus, --gpus-per-node, --gpus-per-task or --gres=gpu"},
		{[]string{"--mem-per-gpu=2G", "--gres=nvme:1", "job.sh"}, "--mem-per-gpu needs GPUs: add --gpus, --gpus-per-node, --gpus-per-task or --gres=gpu"},
		{[]string{"-N", "2", "-n", "10", "--ntasks-per-node", "4", "job.sh"}, "--ntasks=10 does not fit on 2 node(s) with --ntasks-per-node=4"},
		{[]string{"-c", "1024", "-n", "2048", "job.sh"}, "the job asks for 2097152 CPUs per node, more than the limit of 1048576"},
		{[]string{"-n", "2000000", "job.sh"}, "--ntasks must be at most 1048576 (got 2000000)"},
		{[]string{"--mem-per-cpu=8388607T", "-c", "8", "job.sh"}, "--mem-per-cpu x 8 CPUs is too large"},
	} {
		_, err := ParseAt(tc.args, s.read, testNow)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Parse(%q) error = %v\nwant %s", tc.args, err, tc.want)
		}
	}
	// A command line that clears the script's GPUs lifts the conflict.
	if _, err := ParseAt([]string{"--gres=none", "--gpus-per-node=2", "gpu.sh"}, s.read, testNow); err != nil {
		t.Errorf("--gres=none did not clear the script's --gres: %v", err)
	}
}
