package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// The admin view in a browser: it lists another user's running session
// and the nodes; an administrator drains and resumes a node from it; a
// user who is no administrator gets 403.
func TestDashboardAdmin(t *testing.T) {
	c, base := WebCluster(t, ClusterOpts{Config: webGPUConf})
	shots := screenshotDir(t)
	id := c.Submit(mustOpenDir(t, "corral-work-", 0o777), "--uid", "nobody", "-J", "someones", "-t", "10", "-o", "/dev/null", "--wrap", "exec sleep 600")
	c.WaitState(id, api.StateRunning, browserWait)
	t.Cleanup(func() { c.Client.Cancel(context.Background(), api.CancelRequest{IDs: []uint64{id}}) })
	b := NewBrowser(t, base, "root")
	b.SignIn(c, 0)
	if code := b.Open("/admin"); code != http.StatusOK {
		t.Fatalf("the admin view: %d\n%s", code, b.pageText())
	}
	b.WaitFor("node n1 in the admin view", `document.querySelector('tr[data-node="n1"] [data-action="drain"]') !== null`)
	if !Eval[bool](b, fmt.Sprintf(`document.querySelector('main.admin %s[data-user="nobody"]') !== null`, rowSel(id))) {
		t.Errorf("the admin view lacks nobody's running session %d", id)
	}
	b.Screenshot(shots, "admin")
	Eval[bool](b, `(document.querySelector('tr[data-node="n1"] input[name="reason"]').value = "browser test", true)`)
	if code := b.Press("draining n1", `tr[data-node="n1"] [data-action="drain"]`); code != http.StatusOK {
		t.Fatalf("drain: %d\n%s", code, b.pageText())
	}
	b.WaitFor("n1 drained with a resume button", `document.querySelector('tr[data-node="n1"] [data-action="resume"]') !== null`)
	if n := nodeNamed(t, c, "n1"); (n.State != api.NodeDraining && n.State != api.NodeDrained) || !strings.Contains(n.Reason, "browser test") {
		t.Errorf("after drain from the page n1 is %s (%q)", n.State, n.Reason)
	}
	if code := b.Press("resuming n1", `tr[data-node="n1"] [data-action="resume"]`); code != http.StatusOK {
		t.Fatalf("resume: %d\n%s", code, b.pageText())
	}
	b.WaitFor("n1 back with a drain button", `document.querySelector('tr[data-node="n1"] [data-action="drain"]') !== null`)
	if n := nodeNamed(t, c, "n1"); n.State == api.NodeDraining || n.State == api.NodeDrained {
		t.Errorf("after resume from the page n1 is %s", n.State)
	}

	other := NewBrowser(t, base, "nobody")
	other.SignIn(c, nobodyUID)
	if code := other.Open("/admin"); code != http.StatusForbidden {
		t.Errorf("the admin view for a user who is no administrator: %d, want 403", code)
	}
}

func nodeNamed(t *testing.T, c *Cluster, name string) api.Node {
	t.Helper()
	nodes, err := c.Client.Nodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no node %s in %+v", name, nodes)
	return api.Node{}
}
