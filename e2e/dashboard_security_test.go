package e2e

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// The dashboard's defences, in a real browser where a browser is what
// attacks (a replayed or expired link, a forged form on another origin)
// and over plain HTTP for every route the dashboard registers.

// A login link works once and only within its lifetime: a second browser
// opening the same link, or anyone opening an expired one, gets 403 and
// stays signed out. The lifetime is the controller's --web-link-ttl,
// so an expired link needs no waiting.
func TestDashboardLoginLinkReplayAndExpiry(t *testing.T) {
	c, base := WebCluster(t, ClusterOpts{NoNodes: true})
	first := NewBrowser(t, base, "first")
	link := DashboardLink(t, c, nobodyUID)
	if code := first.Open(link); code != http.StatusOK {
		t.Fatalf("the link, first use: %d\n%s", code, first.pageText())
	}
	first.WaitFor("the sessions page", `document.querySelector('[data-resource="cpu"]') !== null`)

	second := NewBrowser(t, base, "second")
	if code := second.Open(link); code != http.StatusForbidden {
		t.Errorf("the link replayed in another browser: %d, want 403", code)
	}
	if txt := second.pageText(); !strings.Contains(txt, "unknown, used or expired") {
		t.Errorf("the replay's page says %q", txt)
	}
	second.Screenshot(screenshotDir(t), "login-refused")
	if code := second.Open("/"); code != http.StatusUnauthorized {
		t.Errorf("after a replayed link the sessions page answers %d, want 401", code)
	}

	// A controller whose links last a millisecond: any link is expired
	// by the time a browser opens it.
	c2, base2 := WebCluster(t, ClusterOpts{NoNodes: true}, "--web-link-ttl", "1ms")
	late := &Browser{t: t, ctx: second.ctx, base: base2, who: "second, on the 1ms controller"} // signed in nowhere
	if code := late.Open(DashboardLink(t, c2, nobodyUID)); code != http.StatusForbidden {
		t.Errorf("an expired link: %d, want 403", code)
	}
	if code := late.Open("/"); code != http.StatusUnauthorized {
		t.Errorf("after an expired link the sessions page answers %d, want 401", code)
	}
	if r := c2.Corral("dashboard"); r.Code != 0 {
		t.Errorf("corral dashboard on the 1ms controller: %d %s", r.Code, r.Stderr)
	}
}

// victimJob is a running job of root's whose output carries a marker no
// other user may read.
func victimJob(t *testing.T, c *Cluster) uint64 {
	t.Helper()
	id := c.Submit(jobDir(t), "-J", "victimjob", "-t", "10", "--wrap", "echo victimsecret; exec sleep 600")
	c.WaitState(id, api.StateRunning, browserWait)
	return id
}

// A page on another origin that posts a terminate form to the dashboard
// while the victim's browser is signed in: without the token, with a
// guessed one, and even with the real one (a leaked token) it is refused,
// because the request comes from another origin, and the job runs on. A
// terminal websocket such a page opens is refused too.
func TestDashboardForgedTerminate(t *testing.T) {
	c, base := WebCluster(t, ClusterOpts{})
	id := victimJob(t, c)
	b := NewBrowser(t, base, "victim")
	b.SignIn(c, 0)
	token := Eval[string](b, `document.querySelector('input[name="csrf"]').value`)
	if token == "" {
		t.Fatal("the sessions page carries no CSRF token")
	}
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/ws" { // a terminal opened from another site's page
			fmt.Fprintf(w, `<!doctype html><title>waiting</title><script>
const ws = new WebSocket(%q);
ws.onopen = () => { document.title = "open"; };
ws.onclose = () => { if (document.title !== "open") document.title = "refused"; };
</script>`, "ws"+strings.TrimPrefix(base, "http")+fmt.Sprintf("/jobs/%d/terminal/ws", id))
			return
		}
		field := ""
		if csrf := r.URL.Query().Get("csrf"); csrf != "" {
			field = fmt.Sprintf(`<input type="hidden" name="csrf" value="%s">`, csrf)
		}
		fmt.Fprintf(w, `<!doctype html><title>win a prize</title><form method="post" action="%s/jobs/%d/terminate">%s</form>
<script>document.forms[0].submit()</script>`, base, id, field)
	}))
	defer evil.Close()
	for _, csrf := range []string{"", "guessed", token} {
		b.Open(evil.URL + "/?csrf=" + url.QueryEscape(csrf))
		b.WaitFor("the forged form's answer", fmt.Sprintf(`location.origin === %q`, base))
		if txt := b.pageText(); !strings.Contains(txt, "Refused") {
			t.Errorf("the forged terminate (csrf %q) was answered with %q", csrf, txt)
		}
		if j := c.Job(id); j.State != api.StateRunning {
			t.Fatalf("a forged terminate (csrf %q) changed job %d: %s", csrf, id, j.State)
		}
	}
	b.Screenshot(screenshotDir(t), "csrf-refused")

	// The terminal's websocket opened by another site's page in the
	// signed-in browser: refused before it opens, and no step starts.
	b.Open(evil.URL + "/ws")
	b.WaitFor("the cross-origin websocket's end", `document.title !== "waiting"`)
	if title := Eval[string](b, `document.title`); title != "refused" {
		t.Errorf("a terminal websocket from another origin: %s, want refused", title)
	}
	if steps, err := c.Client.Steps(context.Background(), id); err != nil || len(steps) != 0 {
		t.Errorf("a refused cross-origin terminal left steps %+v (%v)", steps, err)
	}
	if j := c.Job(id); j.State != api.StateRunning {
		t.Errorf("a cross-origin terminal changed job %d: %s", id, j.State)
	}
}

// dashboardRoutes are the patterns package web (and any package under
// it) registers on a mux: the first argument of every Handle or
// HandleFunc call, a string literal or a string constant of the package.
// A new route is covered by the test below without editing it.
func dashboardRoutes(t *testing.T) []string {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	err = filepath.WalkDir(filepath.Join(root, "web"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		files = append(files, f)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	for _, f := range files {
		for _, decl := range f.Decls {
			if g, ok := decl.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, v := range vs.Values {
						if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING && i < len(vs.Names) {
							consts[vs.Names[i].Name], _ = strconv.Unquote(lit.Value)
						}
					}
				}
			}
		}
	}
	var routes []string
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 2 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Handle" && sel.Sel.Name != "HandleFunc") {
				return true
			}
			switch a := call.Args[0].(type) {
			case *ast.BasicLit:
				p, _ := strconv.Unquote(a.Value)
				routes = append(routes, p)
			case *ast.Ident:
				p, ok := consts[a.Name]
				if !ok {
					t.Fatalf("%s: a route named by %s, which is not a string constant of package web", fset.Position(a.Pos()), a.Name)
				}
				routes = append(routes, p)
			default:
				t.Fatalf("%s: a route this test cannot read: register it with a string literal or constant", fset.Position(call.Pos()))
			}
			return true
		})
	}
	if !slices.Contains(routes, "POST /jobs/{id}/terminate") {
		t.Fatalf("the routes found in package web lack POST /jobs/{id}/terminate: the parse is broken: %v", routes)
	}
	return routes
}

var wildcardRE = regexp.MustCompile(`\{([A-Za-z_]+)(\.\.\.)?\}`)

// jobWildcards name a job; other wildcards get a harmless value.
var jobWildcards = []string{"id", "job", "jobid"}

// routeQueries are the query strings routes need to get past checking
// their request to the ownership check. A route that answers 400 without
// one fails the test below, asking for an entry here.
var routeQueries = map[string]string{
	"GET /jobs/{id}/log/follow": "offset=0",
}

// routeURL fills a pattern's wildcards with the job id; it says false
// for a route that names no job.
func routeURL(t *testing.T, pattern string, id uint64) (method, path string, ok bool) {
	method, path, found := strings.Cut(pattern, " ")
	if !found {
		method, path = http.MethodGet, pattern
	}
	path = strings.TrimPrefix(path, "/{$}")
	names := false
	path = wildcardRE.ReplaceAllStringFunc(path, func(w string) string {
		m := wildcardRE.FindStringSubmatch(w)
		switch {
		case slices.Contains(jobWildcards, m[1]):
			names = true
			return strconv.FormatUint(id, 10)
		case m[2] != "": // the rest of a path
			return ""
		case strings.HasPrefix(path, "/admin/") && (m[1] == "name" || m[1] == "node"):
			return "n1" // the cluster's node
		case m[1] == "name" || m[1] == "app":
			return "notebook"
		}
		t.Fatalf("route %s has a wildcard {%s} this test does not know: say in jobWildcards whether it names a job", pattern, m[1])
		return ""
	})
	path = strings.ReplaceAll(path, "{$}", "")
	if q := routeQueries[pattern]; q != "" {
		path += "?" + q
	}
	return method, path, names
}

// httpUser is a signed-in dashboard user over plain HTTP.
type httpUser struct {
	t    *testing.T
	base string
	hc   *http.Client
	csrf string
}

func signInHTTP(t *testing.T, c *Cluster, base string, uid uint32) *httpUser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	u := &httpUser{t: t, base: base, hc: &http.Client{Jar: jar, Timeout: browserWait,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if code, _ := u.do(http.MethodGet, DashboardLink(t, c, uid), nil); code != http.StatusSeeOther {
		t.Fatalf("uid %d's login link: %d, want a redirect", uid, code)
	}
	code, page := u.do(http.MethodGet, base+"/", nil)
	if _, after, ok := strings.Cut(page, `name="csrf" value="`); ok {
		u.csrf, _, _ = strings.Cut(after, `"`)
	}
	if code != 200 || u.csrf == "" {
		t.Fatalf("uid %d's sessions page: %d, CSRF token %q", uid, code, u.csrf)
	}
	return u
}

// do sends a request as the user: a POST carries the user's own CSRF
// token from the dashboard's own origin, a GET asks for a websocket too
// (so a terminal's socket is tried, not just its page).
func (u *httpUser) do(method, target string, form url.Values) (int, string) {
	u.t.Helper()
	var body io.Reader
	if method != http.MethodGet {
		if form == nil {
			form = url.Values{}
		}
		form.Set("csrf", u.csrf)
		body = strings.NewReader(form.Encode())
	}
	ctx, cancel := context.WithTimeout(context.Background(), browserWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		u.t.Fatal(err)
	}
	req.Header.Set("Origin", u.base)
	if method == http.MethodGet {
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	} else {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := u.hc.Do(req)
	if err != nil {
		u.t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp.StatusCode, "" // a stream does not end: its status is the answer
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

// Another user's job id in every URL the dashboard has that names a job:
// nobody, signed in, tries each on root's running job with nobody's own
// valid CSRF token from the right origin. Every one is refused (403 or
// 404), shows none of the job's output, and the job runs on unchanged.
// Every administrator's route (/admin...) refuses nobody, and the node
// stays as it was.
func TestDashboardOtherUsersJobInEveryRoute(t *testing.T) {
	c, base := WebCluster(t, ClusterOpts{})
	id := victimJob(t, c)
	before := c.Job(id)
	done := c.Submit(jobDir(t), "-J", "victimjob", "--wrap", "echo victimsecret")
	c.WaitEnded(done, browserWait)
	nobody := signInHTTP(t, c, base, nobodyUID)
	root := signInHTTP(t, c, base, 0) // the control: the owner does see them
	tried, listed := 0, 0
	for _, pattern := range dashboardRoutes(t) {
		method, path, names := routeURL(t, pattern, id)
		if strings.HasPrefix(path, "/admin") { // an administrator's page or action
			code, body := nobody.do(method, base+path, url.Values{"reason": {"nobody's"}})
			t.Logf("%s %s as a user who is no administrator: %d", method, path, code)
			if code != http.StatusForbidden {
				t.Errorf("%s %s as a user who is no administrator: %d, want 403\n%.300s", method, path, code, body)
			}
			continue
		}
		if !names {
			// A page of lists (sessions, history): none of root's jobs.
			if method == http.MethodGet && !strings.HasPrefix(path, "/login") && !strings.HasPrefix(path, "/static/") {
				if code, page := nobody.do(method, base+path, nil); code == 200 && strings.Contains(page, "victimjob") {
					t.Errorf("nobody's %s lists root's jobs", path)
				}
				if _, page := root.do(method, base+path, nil); strings.Contains(page, "victimjob") {
					listed++
				}
			}
			continue
		}
		tried++
		code, body := nobody.do(method, base+path, nil)
		t.Logf("%s %s as another user: %d", method, path, code)
		switch code {
		case http.StatusForbidden, http.StatusNotFound:
		case http.StatusBadRequest:
			t.Errorf("%s %s: 400 before any ownership check (%.200s): give the query it needs in routeQueries", method, path, body)
		default:
			t.Errorf("%s %s as another user: %d, want 403 or 404\n%.300s", method, path, code, body)
		}
		if strings.Contains(body, "victimsecret") {
			t.Errorf("%s %s as another user shows the job's output", method, path)
		}
	}
	if listed < 2 { // the sessions page and the history
		t.Errorf("root's own jobs are listed on %d of the dashboard's pages, want at least 2: the listing check sees nothing", listed)
	}
	if tried == 0 {
		t.Fatal("no route of the dashboard names a job: the route parse is broken")
	}
	after := c.Job(id)
	if after.State != api.StateRunning || after.TimeLimit != before.TimeLimit || after.Name != before.Name {
		t.Errorf("job %d changed under another user's requests: %s, limit %d → %d s, name %q → %q", id, after.State,
			before.TimeLimit, after.TimeLimit, before.Name, after.Name)
	}
	nodes, err := c.Client.Nodes(context.Background())
	if err != nil || len(nodes) != 1 || !slices.Contains([]api.NodeState{api.NodeIdle, api.NodeMixed, api.NodeAllocated}, nodes[0].State) {
		t.Errorf("the node after the refused requests: %+v (%v)", nodes, err)
	}
	jobs, err := c.Client.Jobs(context.Background(), api.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 {
		t.Errorf("the cluster has %d active jobs after the refused requests, want just job %d", len(jobs), id)
	}
}
