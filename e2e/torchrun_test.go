package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// torchRecipe is the usual multi-node PyTorch batch script, unchanged but
// for the port (a free one, as other tests share the host).
const torchRecipe = `#!/bin/bash
nodes=( $( scontrol show hostnames $SLURM_JOB_NODELIST ) )
head_node=${nodes[0]}
head_node_ip=$(srun --nodes=1 --ntasks=1 -w "$head_node" hostname --ip-address)
echo "head $head_node $head_node_ip"
srun torchrun --nnodes 2 --nproc_per_node 2 --rdzv_id 4242 --rdzv_backend c10d \
  --rdzv_endpoint $head_node_ip:PORT torch-worker.py
`

// copyTestdata copies testdata/name to dir/as with the given mode.
func copyTestdata(t *testing.T, name, dir, as string, mode os.FileMode) {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, as), b, mode)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Issue 13, acceptance 6: the PyTorch recipe with a stand-in for torchrun
// (testdata/torchrun-standin: one agent per node meets the others at the
// c10d endpoint and starts two workers each with torchrun's environment).
// The 4 workers, two on each node, meet at MASTER_ADDR:MASTER_PORT.
func TestTorchrunRecipe(t *testing.T) {
	needCommands(t, "python3", "hostname")
	c, dir := mpiCluster(t)
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	copyTestdata(t, "torchrun-standin", bin, "torchrun", 0o755)
	copyTestdata(t, "torch-worker.py", dir, "torch-worker.py", 0o644)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	script := filepath.Join(dir, "train.sh")
	if err := os.WriteFile(script, []byte(strings.Replace(torchRecipe, "PORT", strconv.Itoa(freePort(t)), 1)), 0o755); err != nil {
		t.Fatal(err)
	}
	id := c.Submit(dir, "--uid", "nobody", "-N2", "--ntasks-per-node=1", "-t", "5", "-o", "train.out", script)
	j := c.WaitEnded(id, 90*time.Second)
	b, _ := os.ReadFile(filepath.Join(dir, "train.out"))
	if j.State != api.StateCompleted {
		t.Fatalf("job %d ended %s (%s); output:\n%s", id, j.State, j.Message, b)
	}
	// Both nodes share this host, so either agent may bind the endpoint
	// and be group 0: each node holds one group's two ranks, in order.
	perNode := map[string][]int{}
	for _, l := range strings.Split(string(b), "\n") {
		var rank, world, local, localWorld int
		var node string
		if n, _ := fmt.Sscanf(l, "rank %d of %d local %d/%d on %s met", &rank, &world, &local, &localWorld, &node); n != 5 {
			continue
		}
		if world != 4 || localWorld != 2 || rank%2 != local || !strings.HasSuffix(l, " met 0 1 2 3") {
			t.Errorf("worker said %q: want a world of 4, 2 per node, RANK = 2*group + LOCAL_RANK and all ranks met", l)
		}
		perNode[node] = append(perNode[node], rank)
	}
	for _, r := range perNode {
		slices.Sort(r)
	}
	groups := [][]int{perNode["n1"], perNode["n2"]}
	slices.SortFunc(groups, func(a, b []int) int { return slices.Compare(a, b) })
	if len(perNode) != 2 || !slices.Equal(groups[0], []int{0, 1}) || !slices.Equal(groups[1], []int{2, 3}) {
		t.Fatalf("workers per node %v, want ranks 0,1 on one node and 2,3 on the other; output:\n%s", perNode, b)
	}
	if !strings.HasPrefix(string(b), "head n1 ") {
		t.Errorf("the recipe's head node: output starts %q, want n1 and its address", b)
	}
}
