package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/images/imagetest"
)

// Seed 002 in the browser: a session launched from the dialog with an
// image version, 1 CPU and 256 MB; its terminal, opened from the row's
// terminal action, is a shell in that image's container where `cat` of
// the memory limit under /sys/fs/cgroup prints 268435456.
func TestDashboardSeed002Terminal(t *testing.T) {
	imagetest.MustBusybox(t)
	reg := imagetest.MustRegistry(t)
	ref := reg + "/fw:2.2"
	imagetest.MustPush(t, ref, imagetest.MustImage(t, "2.2", nil))
	store := mustOpenDir(t, "corral-images-", 0o755)
	c, base := WebCluster(t, ClusterOpts{Config: webGPUConf, Nodes: []NodeOpts{{Name: "web002", CPUs: 2, Mem: "2G",
		Args: []string{"--image-store", store}}}})
	if r := c.Corral("image", "pull", ref); r.Code != 0 {
		t.Fatalf("image pull: %+v", r)
	}
	shots := screenshotDir(t)
	b := NewBrowser(t, base, "root")
	b.SignIn(c, 0)
	if code := b.Open("/launch"); code != 200 {
		t.Fatalf("the launch dialog: %d", code)
	}
	if !Eval[bool](b, fmt.Sprintf(`[...document.querySelector('select[name="image"]').options].some(o => o.value === %q)`, ref)) {
		t.Fatalf("the launch dialog does not offer the image %s:\n%s", ref, b.pageText())
	}
	b.Screenshot(shots, "launch")
	id := b.launchOne(map[string]string{"image": ref, "cpus": "1", "mem_mib": "256", "name": "seed002"})
	t.Cleanup(func() { c.Client.Cancel(context.Background(), api.CancelRequest{IDs: []uint64{id}}) })
	b.WaitFor("the session RUNNING with its terminal action", fmt.Sprintf(`document.querySelector('%s a.terminal-action') !== null`, rowSel(id)))
	if j := c.Job(id); j.Spec.ContainerImage != ref || j.Spec.CPUs != 1 || j.Spec.MemBytes != 256<<20 {
		t.Fatalf("job %d: image %q, %d CPUs, %d bytes; want %s, 1, 256 MiB", id, j.Spec.ContainerImage, j.Spec.CPUs, j.Spec.MemBytes, ref)
	}
	if cfg := Eval[string](b, cellJS(id, colConfig)); !strings.Contains(cfg, "fw:2.2") {
		t.Errorf("the configuration column %q does not name the image version", cfg)
	}

	if code := b.Press("opening the terminal", rowSel(id)+` a.terminal-action`); code != 200 {
		t.Fatalf("the terminal page: %d\n%s", code, b.pageText())
	}
	b.WaitFor("the terminal open", fmt.Sprintf(`document.getElementById("terminal")?.dataset.jobId === %q && document.getElementById("terminal").dataset.status === "open"`, idText(id)))
	b.TypeLine(`.xterm-helper-textarea`, "cat /VERSION /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory.max 2>/dev/null")
	b.WaitFor("the image's version and the memory limit in the terminal",
		`(() => { const t = document.querySelector(".xterm-rows")?.innerText ?? ""; return /^2\.2$/m.test(t) && /^268435456$/m.test(t); })()`)
	b.Screenshot(shots, "terminal")

	steps, err := c.Client.Steps(context.Background(), id)
	if err != nil || len(steps) != 1 || steps[0].State != api.StateRunning {
		t.Fatalf("the session's steps with the terminal open: %+v %v", steps, err)
	}
	b.Open("/")
	waitTerminalClosed(t, c, id, "the browser left the page")
}

// waitTerminalClosed waits until the session's one step, its terminal,
// has ended, and checks the session runs on.
func waitTerminalClosed(t *testing.T, c *Cluster, id uint64, after string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second) // a bound on the wait, not a timing claim
	for {
		steps, err := c.Client.Steps(context.Background(), id)
		if err == nil && len(steps) == 1 && steps[0].State != api.StateRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal's step did not end after %s: %+v %v", after, steps, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if j := c.Job(id); j.State != api.StateRunning {
		t.Fatalf("closing the terminal ended the session: %s", j.State)
	}
}

// TypeLine enters a line into the element a CSS selector names: the text
// as the browser's text input (as a paste or an input method gives it;
// chromedp's per-key events reach xterm.js twice, as a key and as a
// character), then one Enter key.
func (b *Browser) TypeLine(sel, text string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserWait)
	defer cancel()
	insert := func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		return cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: text})
	}
	enter := func(typ input.DispatchKeyEventType) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
			return cdp.Call(ctx, t, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: typ, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13})
		}
	}
	err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(sel)), insert,
		enter(input.DispatchKeyEventTypeRawKeyDown), enter(input.DispatchKeyEventTypeKeyUp))
	if err != nil {
		b.t.Fatalf("%s browser: typing into %s: %v\n%s", b.who, sel, err, b.pageText())
	}
}
