package cli

import (
	"slices"
	"strings"
	"testing"
)

// Outside an allocation srun makes one from its options (sbatch's
// spelling, the counts as srun settled them), says it waits while it is
// pending, runs the step in it and releases it with the step's status.
func TestSrunOutsideAnAllocation(t *testing.T) {
	n1 := &fakeStepNode{name: "n1", ranks: []int{0}, play: splitLinesPlayer(func(int) int { return 3 })}
	fc := newFakeStepCluster(t, n1)
	fc.pending = 2
	code, _, stderr := fc.srun(t, "", nil, "-n1", "-c2", "--mem=1G", "-t", "5", "-p", "batch", "-w", "n1", "-x", "n[7-8]", "--input=none", "true")
	if code != 3 {
		t.Fatalf("exit %d, want the step's 3; stderr %q", code, stderr)
	}
	for _, want := range []string{"srun: job 5 queued and waiting for resources\n", "srun: job 5 has been allocated resources\n"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if len(fc.submitted) != 1 {
		t.Fatalf("submitted %d jobs", len(fc.submitted))
	}
	s := fc.submitted[0]
	if !s.Allocation || s.Script != "" || s.Ntasks != 1 || s.CPUsPerTask != 2 || s.CPUs != 2 || s.MemBytes != 1<<30 ||
		s.TimeLimit != 300 || s.Partition != "batch" || s.Name != "true" || s.WorkDir == "" ||
		!slices.Equal(s.NodeList, []string{"n1"}) || !slices.Equal(s.Exclude, []string{"n7", "n8"}) {
		t.Errorf("allocation spec = %+v", s)
	}
	if len(fc.released) != 1 || fc.released[0].ExitCode != 3 {
		t.Errorf("releases = %+v, want one with exit code 3", fc.released)
	}
	if fc.request.Ntasks != 1 || fc.request.CPUsPerTask != 2 {
		t.Errorf("step request = %+v", fc.request)
	}
	// The first look answers at once (srun says it is queued); the next
	// ask ctld to hold the answer until the grant, longer each time.
	if len(fc.waits) != 2 || fc.waits[0] != 0 || fc.waits[1] <= 0 {
		t.Errorf("looks at the pending allocation waited %v ms, want 0 then more", fc.waits)
	}
}

// Inside an allocation the allocation's options change nothing, and srun
// says so.
func TestSrunAllocationOptionsInsideAnAllocation(t *testing.T) {
	n1 := &fakeStepNode{name: "n1", ranks: []int{0}, play: splitLinesPlayer(func(int) int { return 0 })}
	fc := newFakeStepCluster(t, n1)
	code, _, stderr := fc.srun(t, "", inJob, "-p", "batch", "--input=none", "true")
	if code != 0 || !strings.Contains(stderr, "srun: warning: --partition is ignored inside an allocation") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if len(fc.submitted) != 0 {
		t.Errorf("srun inside an allocation submitted %+v", fc.submitted)
	}
}

// srun --exclusive outside an allocation asks for whole nodes, and --mem=0
// for all their memory; inside one, --exclusive=user has no meaning for a
// step and is refused.
func TestSrunExclusive(t *testing.T) {
	n1 := &fakeStepNode{name: "n1", ranks: []int{0}, play: splitLinesPlayer(func(int) int { return 0 })}
	fc := newFakeStepCluster(t, n1)
	code, _, stderr := fc.srun(t, "", nil, "--exclusive=user", "--mem=0", "--input=none", "true")
	if code != 0 {
		t.Fatalf("exit %d; stderr %q", code, stderr)
	}
	fc.mu.Lock()
	if len(fc.submitted) != 1 || fc.submitted[0].Exclusive != "user" || !fc.submitted[0].MemWholeNode {
		t.Errorf("submitted %+v, want one --exclusive=user --mem=0 allocation", fc.submitted)
	}
	fc.mu.Unlock()

	fc = newFakeStepCluster(t, n1)
	code, _, stderr = fc.srun(t, "", inJob, "--exclusive=user", "--input=none", "true")
	if code != 1 || !strings.Contains(stderr, "srun: error: --exclusive=user is for allocations; a step takes --exclusive alone") {
		t.Errorf("inside an allocation: exit %d, stderr %q", code, stderr)
	}
	if len(fc.submitted) != 0 {
		t.Errorf("srun inside an allocation submitted %+v", fc.submitted)
	}
}
