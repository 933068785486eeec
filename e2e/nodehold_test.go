package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// Issue 11, finding 4, with the real binaries: an unprivileged job whose
// launch a node refuses for the job's own reasons (a --mount on a node
// without --mount-root, an image that does not exist, a missing work
// directory it may not enter) fails; it never takes the node DOWN, so everyone else's
// jobs keep running there. Before the fix each refusal held n1 DOWN for
// 10 s and sent the job back to PENDING, over and over.
func TestUserInputNeverTakesANodeDown(t *testing.T) {
	store := mustOpenDir(t, "corral-images-", 0o755)
	data := mustOpenDir(t, "corral-data-", 0o755)
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{
		{Name: "n1", Args: []string{"--image-store", store}},
		{Name: "n2", Args: []string{"--image-store", store, "--mount-root", data}},
	}})
	work := mustOpenDir(t, "corral-work-", 0o777)
	downs := watchDown(t, c, "n1")

	// The finding's exact command: no node allows /usr, so submit says so.
	r := runCorral(t, c.Socket, work, "submit", "--uid", "nobody", "--mount", "/usr:/mnt:ro", "--wrap", "true")
	if lines := strings.Split(strings.TrimSpace(r.Stderr), "\n"); r.Code == 0 || len(lines) != 1 ||
		!strings.Contains(r.Stderr, "no node of partition") || !strings.Contains(r.Stderr, "--mount /usr") {
		t.Fatalf("--mount /usr on nodes that do not allow it: exit %d, stderr %q", r.Code, r.Stderr)
	}

	// n2 allows the mount but is drained: the job lands on n1, which has
	// no --mount-root and refuses it at launch (the backstop).
	if r := c.Corral("nodes", "drain", "n2", "--reason", "keep jobs on n1"); r.Code != 0 {
		t.Fatalf("drain n2: %d %q", r.Code, r.Stderr)
	}
	refused := c.Submit(work, "--uid", "nobody", "--mount", data+":/mnt:ro", "-o", "/dev/null", "--wrap", "true")
	noImage := c.Submit(work, "--uid", "nobody", "--container-image", "127.0.0.1:1/nope:1", "-o", "/dev/null", "--wrap", "true")
	private := mustOpenDir(t, "corral-private-", 0o700) // root's: nobody cannot enter it
	noDir := c.Submit(work, "--uid", "nobody", "-D", private, "-o", "/dev/null", "--wrap", "true")
	for _, f := range []struct {
		id   uint64
		want string
	}{{refused, "allows no --mount"}, {noImage, "pulling it failed"}, {noDir, "work directory"}} {
		if j := c.WaitEnded(f.id, 60*time.Second); j.State != api.StateFailed || !strings.Contains(j.Message, f.want) {
			t.Errorf("job %d: %s %q, want FAILED with %q", f.id, j.State, j.Message, f.want)
		}
	}
	if j := c.Job(refused); j.Reason != api.ReasonLaunchFailed || j.Restarts != 0 || len(j.Runs) != 0 {
		t.Errorf("the refused job: reason %s, %d restarts, runs %+v", j.Reason, j.Restarts, j.Runs)
	}

	// Another user's trivial job runs on n1 at once.
	other := c.Submit(work, "-o", "/dev/null", "--wrap", "true")
	if j := c.WaitEnded(other, 60*time.Second); j.State != api.StateCompleted || len(j.Nodes) != 1 || j.Nodes[0] != "n1" {
		t.Fatalf("the other user's job: %s on %v %q", j.State, j.Nodes, j.Message)
	} else {
		t.Logf("the other user's job ended %s after its submit (about 11 s before the fix)", j.EndTime.Sub(j.SubmitTime))
	}
	if seen := downs(); len(seen) > 0 {
		t.Fatalf("n1 was DOWN: %s", strings.Join(seen, "; "))
	}
}

// watchDown polls the node's state until the test ends; the returned
// func lists the DOWN states seen so far, with their reasons.
func watchDown(t *testing.T, c *Cluster, name string) func() []string {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var seen []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			nodes, _ := c.Client.Nodes(ctx)
			for _, n := range nodes {
				if n.Name == name && n.State == api.NodeDown {
					mu.Lock()
					seen = append(seen, n.Reason)
					mu.Unlock()
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}
