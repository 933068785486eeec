package e2e

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/corral-hpc/corral/api"
)

// appBrowser is a signed-in browser of the dashboard: it keeps cookies
// and does not follow redirects.
type appBrowser struct {
	t    *testing.T
	base string
	hc   *http.Client
	jar  *cookiejar.Jar
}

func newAppBrowser(t *testing.T, base string) *appBrowser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &appBrowser{t: t, base: base, jar: jar, hc: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// get fetches path with extra headers; it returns the status, body and
// response headers.
func (b *appBrowser) get(path string, header ...string) (int, string, http.Header) {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.base+strings.TrimPrefix(path, b.base), nil)
	if err != nil {
		b.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header
}

// cookie is the dashboard's session cookie as a Cookie header.
func (b *appBrowser) cookie() string {
	u, _ := url.Parse(b.base)
	for _, c := range b.jar.Cookies(u) {
		if c.Name == "corral_session" {
			return c.Name + "=" + c.Value
		}
	}
	b.t.Fatal("not signed in: no corral_session cookie")
	return ""
}

// startWebCluster is a one-node cluster with the dashboard on a free
// port, trusting X-Remote-User (a second user signs in with it).
func startWebCluster(t *testing.T) (*Cluster, string) {
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{{Name: "n1", CPUs: 2, Mem: "2G"}},
		CtldArgs: []string{"--web", addr, "--web-trusted-header", "X-Remote-User"}})
	return c, "http://" + c.WebAddr() // picked again if addr was taken before ctld bound it
}

// signInAsCaller opens a `corral dashboard` link (root's) in b.
func signInAsCaller(t *testing.T, c *Cluster, b *appBrowser) {
	t.Helper()
	r := c.Corral("dashboard")
	if r.Code != 0 || !strings.HasPrefix(strings.TrimSpace(r.Stdout), b.base+"/login?token=") {
		t.Fatalf("corral dashboard: exit %d: %s%s", r.Code, r.Stdout, r.Stderr)
	}
	if code, _, _ := b.get(strings.TrimSpace(r.Stdout)); code != http.StatusSeeOther {
		t.Fatalf("opening the login link: %d, want 303", code)
	}
}

// waitApp polls path until the app answers 200 (it starts with the job),
// showing the app's output (file out) if it never does.
func waitApp(t *testing.T, b *appBrowser, path string, timeout time.Duration, out string, header ...string) (string, http.Header) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		code, body, h := b.get(path, header...)
		if code == http.StatusOK {
			return body, h
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(out)
			t.Fatalf("GET %s: %d %s\napp output:\n%s", path, code, body, log)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestAppProxy: a session publishing a small HTTP and websocket app
// (testdata/appserver.py) is reached through the dashboard and its node
// by its owner, path and the app's own cookies passed through unchanged,
// the dashboard's cookie never; a cross-origin websocket, another user,
// an unpublished name, a job squatting on another's port and an ended
// job are each refused with their own status, and nothing of theirs
// reaches the app.
func TestAppProxy(t *testing.T) {
	c, base := startWebCluster(t)
	dir := jobDir(t)
	server, err := filepath.Abs("testdata/appserver.py")
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	out := filepath.Join(dir, "app.out")
	id := c.Submit(dir, "--app", "web="+strconv.Itoa(port), "-t", "5", "-o", out,
		"--wrap", "echo served at $CORRAL_APP_WEB_URL port $CORRAL_APP_WEB_PORT; exec python3 "+server+" $CORRAL_APP_WEB_PORT")
	c.WaitState(id, api.StateRunning, 20*time.Second)
	if r := c.Corral("show", "job", strconv.FormatUint(id, 10)); !strings.Contains(r.Stdout, "Apps=web="+strconv.Itoa(port)+"(/apps/"+strconv.FormatUint(id, 10)+"/web/)") {
		t.Errorf("corral show job lacks the app:\n%s", r.Stdout)
	}
	owner := newAppBrowser(t, base)
	signInAsCaller(t, c, owner)
	app := "/apps/" + strconv.FormatUint(id, 10) + "/web/"

	if _, page, _ := owner.get("/"); !strings.Contains(page, `data-app="web" href="`+app+`"`) {
		t.Errorf("the sessions page does not link the app:\n%s", page)
	}
	body, h := waitApp(t, owner, app+"hello?x=1", 30*time.Second, out, "Cookie", "mine=1")
	if want := "app " + app + "hello?x=1 job " + strconv.FormatUint(id, 10) + " cookie=mine=1\n"; body != want {
		t.Errorf("the app saw %q, want %q (path unchanged, only the app's cookies)", body, want)
	}
	for _, sc := range h.Values("Set-Cookie") {
		if strings.HasPrefix(sc, "corral_session=") {
			t.Errorf("the app set the dashboard's cookie: %s", sc)
		}
	}
	if !strings.Contains(strings.Join(h.Values("Set-Cookie"), "\n"), "app=1") {
		t.Errorf("the app's own cookie was dropped: %v", h.Values("Set-Cookie"))
	}
	if env, err := os.ReadFile(out); err != nil || !strings.Contains(string(env), "served at "+app+" port "+strconv.Itoa(port)) {
		t.Errorf("the job's environment: %q, %v", env, err)
	}

	// A websocket from the dashboard's own origin is relayed both ways.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	wsURL := "ws" + strings.TrimPrefix(base, "http") + app + "ws"
	hdr := http.Header{"Cookie": {owner.cookie()}, "Origin": {base}}
	ws, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		t.Fatalf("websocket through the proxy: %v", err)
	}
	if err := ws.Write(ctx, websocket.MessageText, []byte("ping")); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := ws.Read(ctx); err != nil || string(msg) != "echo: ping" {
		t.Fatalf("websocket echo: %q, %v", msg, err)
	}
	ws.Close(websocket.StatusNormalClosure, "")
	// Another site's page may not open one with the owner's cookie.
	_, resp, err := websocket.Dial(ctx, wsURL+"-evil", &websocket.DialOptions{HTTPHeader: http.Header{
		"Cookie": {owner.cookie()}, "Origin": {"http://evil.example"}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-origin websocket: %v (%v), want 403", err, resp)
	}

	// Another user: signed in (the sign-on header once, then the cookie).
	other := newAppBrowser(t, base)
	if code, _, _ := other.get("/", "X-Remote-User", "nobody"); code != http.StatusOK {
		t.Fatalf("nobody's sign-on: %d", code)
	}
	if code, body, _ := other.get(app + "from-nobody"); code != http.StatusForbidden || !strings.Contains(body, "only its owner") {
		t.Errorf("another user's request: %d %s, want 403", code, body)
	}
	if code, body, _ := owner.get("/apps/" + strconv.FormatUint(id, 10) + "/nope/"); code != http.StatusNotFound || !strings.Contains(body, "publishes no app named") {
		t.Errorf("an unpublished app: %d %s, want 404", code, body)
	}

	// A second session publishing the same port on the same node: the
	// listener is the first job's, so the second's app is refused.
	squatter := c.Submit(dir, "--app", "web="+strconv.Itoa(port), "-t", "5", "-o", "/dev/null", "--wrap", "sleep 300")
	c.WaitState(squatter, api.StateRunning, 20*time.Second)
	// RUNNING comes with the launch; until its node answers, the app is
	// 503 (starting), so ask again until it is not.
	squatted := "/apps/" + strconv.FormatUint(squatter, 10) + "/web/from-squatter"
	code, body, _ := owner.get(squatted)
	for deadline := time.Now().Add(20 * time.Second); code == http.StatusServiceUnavailable && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		code, body, _ = owner.get(squatted)
	}
	if code != http.StatusConflict || !strings.Contains(body, "held by a process outside job "+strconv.FormatUint(squatter, 10)) {
		t.Errorf("a port held by another job: %d %s, want 409", code, body)
	}

	if r := c.Corral("cancel", strconv.FormatUint(id, 10), strconv.FormatUint(squatter, 10)); r.Code != 0 {
		t.Fatalf("cancel: %s", r.Stderr)
	}
	c.WaitEnded(id, 20*time.Second)
	if code, body, _ := owner.get(app); code != http.StatusConflict || !strings.Contains(body, "not running") {
		t.Errorf("an ended job's app: %d %s, want 409", code, body)
	}
	log, _ := os.ReadFile(out)
	for _, refused := range []string{"from-nobody", "-evil", "from-squatter"} {
		if strings.Contains(string(log), refused) {
			t.Errorf("a refused request reached the app (%s):\n%s", refused, log)
		}
	}
}
