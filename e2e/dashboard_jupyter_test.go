package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// Jupyter through the app proxy in a browser (seeds 002/003): the
// session's Jupyter link on the sessions page opens the notebook server,
// a notebook page loads with its scripts and kernel through the proxy and
// runs a cell (1+1 → 2); another user's browser gets 403 from the same
// URL.
func TestDashboardJupyterInTheBrowser(t *testing.T) {
	c, base := WebCluster(t, ClusterOpts{})
	const token = "e2e-browser-token"
	id, out := startJupyter(t, c, token)
	t.Cleanup(func() { c.Client.Cancel(context.Background(), api.CancelRequest{IDs: []uint64{id}}) })

	b := NewBrowser(t, base, "root")
	b.SignIn(c, 0)
	b.WaitFor("the session's Jupyter link", fmt.Sprintf(`document.querySelector('%s a[data-app="jupyter"]') !== null`, rowSel(id)))
	app := Eval[string](b, fmt.Sprintf(`document.querySelector('%s a[data-app="jupyter"]').getAttribute("href")`, rowSel(id)))
	if want := fmt.Sprintf("/apps/%d/jupyter/", id); app != want {
		t.Fatalf("the Jupyter link goes to %q, want %q", app, want)
	}
	// The server starts with the session: the link answers once it listens.
	b.WaitFor("the notebook server", fmt.Sprintf(`fetch(%q, {headers: {Authorization: "token %s"}}).then(r => r.ok)`, app+"api/status", token))
	if code := b.Open(app + "tree?token=" + token); code != http.StatusOK {
		log, _ := os.ReadFile(out)
		t.Fatalf("Jupyter's tree page: %d\n%s\njupyter:\n%s", code, b.pageText(), log)
	}
	b.WaitFor("Jupyter's file list", `document.querySelector("#notebook_list") !== null`)
	path := Eval[string](b, fmt.Sprintf(`fetch(%q, {method: "POST", headers: {Authorization: "token %s"}, body: JSON.stringify({type: "notebook"})})
		.then(r => r.json()).then(j => j.path)`, app+"api/contents", token))
	if path == "" {
		t.Fatal("Jupyter created no notebook")
	}
	if code := b.Open(app + "notebooks/" + path); code != http.StatusOK {
		t.Fatalf("the notebook page: %d\n%s", code, b.pageText())
	}
	b.WaitFor("the notebook's kernel connected through the proxy",
		`window.Jupyter && Jupyter.notebook && Jupyter.notebook.kernel && Jupyter.notebook.kernel.is_connected()`)
	Eval[bool](b, `(() => { const c = Jupyter.notebook.get_cell(0); c.set_text("1+1"); c.execute(); return true; })()`)
	b.WaitFor("the cell's answer, 2", `[...document.querySelectorAll(".output_subarea")].some(e => e.innerText.trim() === "2")`)
	b.Screenshot(screenshotDir(t), "jupyter")

	other := NewBrowser(t, base, "nobody")
	other.SignIn(c, nobodyUID)
	if code := other.Open(app + "notebooks/" + path); code != http.StatusForbidden {
		t.Errorf("another user's browser on the notebook: %d, want 403", code)
	}
	if code := other.Open(app + "tree?token=" + token); code != http.StatusForbidden {
		t.Errorf("another user's browser on Jupyter with its token: %d, want 403", code)
	}
}
