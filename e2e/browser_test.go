package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The browser harness: the dashboard tests drive Debian's Chromium through
// the DevTools protocol (chromedp), headless, each browser with a profile
// of its own (its own cookies: one browser is one signed-in user) that is
// gone, processes and all, when its test ends.

// browserWait bounds every wait on a page: it is a deadline for a page
// that never gets there, not a timing claim.
const browserWait = 30 * time.Second

// screenshotWidth is the width of the window, and so of every screenshot.
const screenshotWidth = 1280

// chromiumPath is $CORRAL_CHROMIUM, or chromium on PATH (Debian's package;
// scripts/install-deps.sh installs it).
func chromiumPath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("CORRAL_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("the dashboard's browser tests need Chromium: install it with scripts/install-deps.sh (Debian's chromium package), or name it in $CORRAL_CHROMIUM")
	return ""
}

// Browser is one headless Chromium, signed in as at most one user.
type Browser struct {
	t       testing.TB
	ctx     context.Context
	base    string // the dashboard's origin, http://host:port
	who     string // names its screenshots
	profile string
}

// NewBrowser starts a Chromium for the dashboard at base. It is killed,
// with every process of its profile, when the test ends; a Chromium that
// cannot start fails the test with the reason.
func NewBrowser(t testing.TB, base, who string) *Browser {
	t.Helper()
	needRoot(t)
	profile, err := os.MkdirTemp("", "corral-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)), chromedp.Headless, chromedp.NoSandbox, // root runs the tests
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.DisableGPU,
		chromedp.UserDataDir(profile), chromedp.WindowSize(screenshotWidth, 900),
		chromedp.Flag("disable-extensions", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("password-store", "basic"), chromedp.Flag("use-mock-keychain", true),
		chromedp.Flag("disable-crash-reporter", true), chromedp.Flag("disable-breakpad", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	b := &Browser{t: t, ctx: ctx, base: base, who: who, profile: profile}
	t.Cleanup(func() {
		// A graceful close lets Chromium reap its own children; the
		// cancels then kill whatever did not stop.
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		_ = chromedp.Cancel(cctx)
		ccancel()
		cancel()
		cancelAlloc()
		if left := processesUsing(profile); len(left) > 0 {
			t.Errorf("Chromium processes %v of profile %s outlived the test", left, profile)
		}
		os.RemoveAll(profile)
	})
	// The first Run starts the browser; it must not carry a deadline (that
	// would end the browser with it).
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("Chromium (%s) did not start: %v", chromiumPath(t), err)
	}
	return b
}

// NewTab opens another tab of the same browser (the same user's cookies),
// closed when the test ends.
func (b *Browser) NewTab(who string) *Browser {
	b.t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	b.t.Cleanup(cancel)
	// As for the browser: the tab lives as long as its first Run's context.
	if err := chromedp.Do(ctx); err != nil {
		b.t.Fatalf("opening a tab: %v", err)
	}
	return &Browser{t: b.t, ctx: ctx, base: b.base, who: who, profile: b.profile}
}

// processesUsing lists the processes whose command line names profile
// as their user data directory (Chromium passes it to every child).
func processesUsing(profile string) []int {
	want := []byte("--user-data-dir=" + profile + "\x00")
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && bytes.Contains(cmd, want) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Open loads a path of the dashboard (or a whole URL) and returns the
// HTTP status of the answer.
func (b *Browser) Open(path string) int64 {
	b.t.Helper()
	u := path
	if !strings.Contains(path, "://") {
		u = b.base + path
	}
	ctx, cancel := context.WithTimeout(b.ctx, browserWait)
	defer cancel()
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(u))
	if err != nil || resp == nil {
		b.t.Fatalf("%s browser: opening %s: %v (response %v)", b.who, u, err, resp)
	}
	return resp.Status
}

// Press clicks the element a CSS selector names, waits for the page the
// click loads (a form's answer, after its redirects) and returns its
// HTTP status.
func (b *Browser) Press(what, sel string) int64 {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserWait)
	defer cancel()
	click := chromedp.Click(chromedp.CSS(sel))
	// A link is followed through the element itself, not a mouse click
	// at where its box was: a live update (live.js) replaces the page's
	// main, and new widths in the row (a session's elapsed time, its
	// CPU time) can move a small link between the box lookup and the
	// click, which then lands beside it and loads nothing (seen once in
	// TestDashboardSeed002Terminal, the terminal's ">_" link).
	if Eval[bool](b, fmt.Sprintf(`document.querySelector(%q)?.matches("a[href]") === true`, sel)) {
		click = chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).click()`, sel))
	}
	resp, err := chromedp.RunResponse(ctx, click)
	// A live update can replace the element between the query and the
	// click, which then fails before any mouse event is sent (the node's
	// box is looked up first): query it again.
	for try := 0; try < 5 && err != nil && strings.Contains(err.Error(), staleNode); try++ {
		resp, err = chromedp.RunResponse(ctx, click)
	}
	if err != nil || resp == nil {
		b.t.Fatalf("%s browser: %s: %v (response %v)\n%s", b.who, what, err, resp, b.pageText())
	}
	return resp.Status
}

// staleNode is the DevTools protocol's answer about a node the page has
// since removed.
const staleNode = "Could not find node with given id"

// Eval evaluates a JavaScript expression in the page (a promise's value
// once it settles).
func Eval[T any](b *Browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserWait)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("%s browser: evaluating %s: %v", b.who, expr, err)
	}
	return v
}

// WaitFor polls the page until the JavaScript expression is truthy, within
// browserWait: live updates are awaited on the DOM, never slept on.
func (b *Browser) WaitFor(what, expr string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserWait+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(browserWait)))
	if err != nil {
		b.t.Fatalf("%s browser: waiting for %s: %v\npage now:\n%s", b.who, what, err, b.pageText())
	}
}

// pageText is the page's visible text, for failure messages.
func (b *Browser) pageText() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if err != nil {
		return "(page text unavailable: " + err.Error() + ")"
	}
	if len(s) > 4000 {
		s = s[:4000] + "..."
	}
	return s
}

// screenshotDir is $CORRAL_SCREENSHOTS (make screenshots sets docs/web;
// a relative one is under the repository's root),
// or a directory of the test's own.
func screenshotDir(t testing.TB) string {
	if d := os.Getenv("CORRAL_SCREENSHOTS"); d != "" {
		if root, err := repoRoot(); err == nil && !filepath.IsAbs(d) {
			d = filepath.Join(root, d) // relative to the repository, not to e2e/
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// Screenshot writes the whole page as name.png under screenshotDir and
// checks it is a PNG of the window's width.
func (b *Browser) Screenshot(dir, name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserWait)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(buf))
	if err != nil || cfg.Width != screenshotWidth {
		b.t.Fatalf("screenshot %s: not a %d-pixel-wide PNG (%v, width %d)", name, screenshotWidth, err, cfg.Width)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// loginRE is a line of `corral dashboard`.
var loginRE = regexp.MustCompile(`^https?://\S+/login\?token=\S+$`)

// DashboardLink runs `corral dashboard` as uid over the cluster's socket
// (the controller knows the caller from the socket's peer credentials, as
// for every command) and returns the one-time link it prints.
func DashboardLink(t testing.TB, c *Cluster, uid uint32) string {
	t.Helper()
	r := corralAs(t, c, uid, "dashboard")
	link := strings.TrimSpace(r.Stdout)
	if r.Code != 0 || !loginRE.MatchString(link) {
		t.Fatalf("corral dashboard as uid %d: exit %d, printed %q, stderr %q", uid, r.Code, r.Stdout, r.Stderr)
	}
	return link
}

// corralAs runs bin/corral as uid against the cluster's socket: a copy
// anyone may run (the build tree may be closed to other users) in a
// directory anyone may enter.
func corralAs(t testing.TB, c *Cluster, uid uint32, args ...string) Result {
	t.Helper()
	if uid == 0 {
		return c.Corral(args...)
	}
	cmd := exec.Command(anyoneCorral(t, c), args...)
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), "CORRAL_SOCKET="+c.Socket)
	return runAs(t, cmd, uid)
}

// anyoneCorral is a copy of bin/corral any user may run, beside the
// cluster's socket, whose directory it opens to all (to pass, not to
// list).
func anyoneCorral(t testing.TB, c *Cluster) string {
	t.Helper()
	if err := os.Chmod(c.Dir, 0o711); err != nil { // the socket is under it
		t.Fatal(err)
	}
	bin := filepath.Join(c.Dir, "corral-anyone")
	if _, err := os.Stat(bin); err != nil {
		data, err := os.ReadFile(filepath.Join(binDir, "corral"))
		if err != nil || os.WriteFile(bin, data, 0o755) != nil {
			t.Fatalf("copying corral: %v", err)
		}
	}
	return bin
}

// runAs runs cmd as uid (its group the same number) and returns what it
// did; a command that cannot start fails the test.
func runAs(t testing.TB, cmd *exec.Cmd, uid uint32) Result {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("running %v as uid %d: %v", cmd.Args, uid, err)
		}
		code = ee.ExitCode()
	}
	return Result{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// SignIn signs the browser in as uid through a link from `corral
// dashboard`, and checks it lands on the sessions page.
func (b *Browser) SignIn(c *Cluster, uid uint32) {
	b.t.Helper()
	if code := b.Open(DashboardLink(b.t, c, uid)); code != http.StatusOK {
		b.t.Fatalf("%s browser: the login link answered %d, want the sessions page\n%s", b.who, code, b.pageText())
	}
	b.WaitFor("the sessions page", `document.querySelector('[data-resource="cpu"][data-scope="group"]') !== null`)
}

// WebCluster starts a cluster whose controller serves the dashboard, and
// returns it with the dashboard's origin.
func WebCluster(t testing.TB, opts ClusterOpts, ctldArgs ...string) (*Cluster, string) {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	opts.CtldArgs = append([]string{"--web", addr}, ctldArgs...)
	c := StartCluster(t, opts)
	return c, "http://" + c.WebAddr() // picked again if addr was taken before ctld bound it
}

// indicatorJS reads the indicator's numbers as "resource/scope" →
// [allocated, limit] from the stable hooks.
const indicatorJS = `Object.fromEntries([...document.querySelectorAll('[data-resource][data-scope]')].map(
	e => [e.dataset.resource + "/" + e.dataset.scope, [Number(e.dataset.allocated), Number(e.dataset.limit)]]))`

// Indicator reads the resource indicator of the page.
func (b *Browser) Indicator() map[string][2]float64 {
	b.t.Helper()
	m := Eval[map[string][2]float64](b, indicatorJS)
	for _, k := range []string{"cpu/group", "cpu/total", "mem/group", "mem/total", "fgpu/group", "fgpu/total"} {
		if _, ok := m[k]; !ok {
			b.t.Fatalf("the indicator has no %s bar: %v", k, m)
		}
	}
	return m
}

// rowsJS lists the session rows as job id → state.
const rowsJS = `Object.fromEntries([...document.querySelectorAll('tr[data-job-id]')].map(r => [r.dataset.jobId, r.dataset.state]))`

// Rows reads the sessions list: job id → state.
func (b *Browser) Rows() map[string]string {
	b.t.Helper()
	return Eval[map[string]string](b, rowsJS)
}

// rowSel is the CSS selector of a job's row.
func rowSel(id uint64) string { return fmt.Sprintf(`tr[data-job-id="%d"]`, id) }
