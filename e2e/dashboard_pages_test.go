package e2e

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// The log and history pages in a browser: a running session's output
// grows in its log page without a reload; a finished one is in the
// history.
func TestDashboardLogAndHistory(t *testing.T) {
	c, base := WebCluster(t, ClusterOpts{Config: webGPUConf})
	shots := screenshotDir(t)
	dir := jobDir(t)
	done := c.Submit(dir, "-J", "finished", "-o", filepath.Join(dir, "done.out"), "--wrap", "echo done")
	c.WaitEnded(done, browserWait)
	// The session prints a line, then another once the test says so.
	gate := filepath.Join(dir, "go")
	id := c.Submit(dir, "-J", "logged", "-t", "10", "-o", filepath.Join(dir, "logged.out"),
		"--wrap", fmt.Sprintf("echo first line; while [ ! -e %s ]; do sleep 0.1; done; echo second line; exec sleep 600", gate))
	c.WaitState(id, api.StateRunning, browserWait)
	t.Cleanup(func() { c.Client.Cancel(context.Background(), api.CancelRequest{IDs: []uint64{id}}) })

	b := NewBrowser(t, base, "root")
	b.SignIn(c, 0)
	if code := b.Open(fmt.Sprintf("/jobs/%d/log", id)); code != http.StatusOK {
		t.Fatalf("the log page: %d\n%s", code, b.pageText())
	}
	b.WaitFor("the first line in the log", fmt.Sprintf(`document.getElementById("log")?.dataset.jobId === %q && document.getElementById("log").innerText.includes("first line")`, idText(id)))
	Eval[bool](b, `window.notReloaded = true`)
	writeFile(t, gate, "")
	b.WaitFor("the second line, followed live", `document.getElementById("log").innerText.includes("second line") && window.notReloaded === true`)
	b.Screenshot(shots, "log")

	if code := b.Open("/history"); code != http.StatusOK {
		t.Fatalf("the history page: %d", code)
	}
	if st := b.Rows()[idText(done)]; st != string(api.StateCompleted) {
		t.Errorf("the history shows job %d as %q, want COMPLETED", done, st)
	}
	b.Screenshot(shots, "history")

}
