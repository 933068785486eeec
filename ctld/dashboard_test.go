package ctld

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// browser is a cookie-keeping HTTP client that does not follow redirects.
type browser struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func newBrowser(t *testing.T, base string) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, base: base, hc: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(req *http.Request) (int, string) {
	b.t.Helper()
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// get fetches a path of the dashboard, or a whole URL of it.
func (b *browser) get(path string) (int, string) {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.base+strings.TrimPrefix(path, b.base), nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

func (b *browser) post(path string, form url.Values, origin string) (int, string) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	return b.do(req)
}

// signIn asks for a login link as uid over the user plane and opens it.
func signIn(t *testing.T, tc *testCluster, b *browser, uid uint32) string {
	t.Helper()
	code, out := callAs(t, tc, uid, "POST", "/v1/dashboard/login", nil)
	var l api.DashboardLogin
	if code != 200 || json.Unmarshal(out, &l) != nil || !strings.HasPrefix(l.URL, b.base+"/login?token=") {
		t.Fatalf("login link: %d %s", code, out)
	}
	if code, _ := b.get(l.URL); code != http.StatusSeeOther {
		t.Fatalf("opening the link: %d, want a redirect to the sessions page", code)
	}
	return l.URL
}

var csrfRE = func(page string) string {
	_, after, ok := strings.Cut(page, `name="csrf" value="`)
	if !ok {
		return ""
	}
	tok, _, _ := strings.Cut(after, `"`)
	return tok
}

// The dashboard signs a user in with a one-time link asked for over the
// socket, shows that user's sessions with the stable test hooks, and
// terminates one only with the session's CSRF token from its own origin.
// Another user sees none of it and cannot terminate it; links work once.
func TestDashboardSignInAndSessions(t *testing.T) {
	tc := MustServer(t, withPartitions(matrixConf), func(c *Config) { c.WebListen = "127.0.0.1:0" })
	base := "http://" + tc.srv.web.Addr()
	mine := tc.submitFor(uidOwner, script("mine"))

	owner := newBrowser(t, base)
	if code, _ := owner.get("/"); code != http.StatusUnauthorized {
		t.Fatalf("the page before signing in: %d, want 401", code)
	}
	link := signIn(t, tc, owner, uidOwner)
	code, page := owner.get("/")
	if code != 200 || !strings.Contains(page, `data-job-id="`+strconv.FormatUint(mine, 10)+`" data-state="PENDING"`) {
		t.Fatalf("owner's sessions page (%d) lacks job %d pending:\n%s", code, mine, page)
	}
	for _, hook := range []string{`data-resource="cpu" data-scope="group"`, `data-resource="mem" data-scope="total"`, `data-resource="fgpu"`,
		"= fairshare "} {
		if !strings.Contains(page, hook) {
			t.Errorf("the indicator lacks %s", hook)
		}
	}
	if code, _ := newBrowser(t, base).get(link); code != http.StatusForbidden {
		t.Errorf("a replayed login link: %d, want 403", code)
	}

	other := newBrowser(t, base)
	signIn(t, tc, other, nobody)
	_, otherPage := other.get("/")
	if strings.Contains(otherPage, `data-job-id="`+strconv.FormatUint(mine, 10)+`"`) {
		t.Errorf("another user's page lists job %d", mine)
	}
	path := "/jobs/" + strconv.FormatUint(mine, 10) + "/terminate"
	if code, _ := other.post(path, url.Values{"csrf": {csrfRE(otherPage)}}, base); code != http.StatusForbidden {
		t.Errorf("another user's terminate: %d, want 403", code)
	}
	token := csrfRE(page)
	for _, bad := range []struct {
		form   url.Values
		origin string
	}{{url.Values{}, base}, {url.Values{"csrf": {"forged"}}, base}, {url.Values{"csrf": {token}}, "http://evil.example"}} {
		if code, _ := owner.post(path, bad.form, bad.origin); code != http.StatusForbidden {
			t.Errorf("terminate with csrf %q from %q: %d, want 403", bad.form.Get("csrf"), bad.origin, code)
		}
	}
	if j := tc.job(mine); j.State != api.StatePending {
		t.Fatalf("refused terminates changed the job: %s", j.State)
	}
	if code, _ := owner.post(path, url.Values{"csrf": {token}}, base); code != http.StatusSeeOther {
		t.Fatalf("owner's terminate: %d, want a redirect", code)
	}
	if j := tc.job(mine); j.State != api.StateCancelled {
		t.Fatalf("after terminate the job is %s", j.State)
	}
	if _, page := owner.get("/"); !strings.Contains(page, `data-job-id="`+strconv.FormatUint(mine, 10)+`" data-state="CANCELLED"`) {
		t.Errorf("the terminated session is not in the page as CANCELLED")
	}

	if code, out := callAs(t, tc, uidOwner, "POST", "/v1/dashboard/logout-all", nil); code != 200 || !strings.Contains(string(out), `"sessions":1`) {
		t.Fatalf("logout-all: %d %s", code, out)
	}
	if code, _ := owner.get("/"); code != http.StatusUnauthorized {
		t.Errorf("after logout-all: %d, want 401", code)
	}
	if code, _ := other.get("/"); code != 200 {
		t.Errorf("another user's session ended with the owner's: %d", code)
	}
}

// Without --web the sign-in route says how to get a dashboard.
func TestDashboardOff(t *testing.T) {
	tc := MustServer(t)
	code, out := callAs(t, tc, nobody, "POST", "/v1/dashboard/login", nil)
	if code != http.StatusNotFound || !strings.Contains(errorText(t, out), "--web") {
		t.Fatalf("login without a dashboard: %d %s", code, out)
	}
}

// A signed-in page's event stream says "changed" when a job is submitted
// or changes state, and the stream is refused without a session.
func TestDashboardLiveEvents(t *testing.T) {
	tc := MustServer(t, withPartitions(matrixConf), func(c *Config) { c.WebListen = "127.0.0.1:0" })
	base := "http://" + tc.srv.web.Addr()
	b := newBrowser(t, base)
	if code, _ := b.get("/events"); code != http.StatusUnauthorized {
		t.Fatalf("events without a session: %d, want 401", code)
	}
	signIn(t, tc, b, uidOwner)
	req, _ := http.NewRequest(http.MethodGet, base+"/events", nil)
	resp, err := b.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, ct)
	}
	got := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "event: ") {
				got <- sc.Text()
				return
			}
		}
		close(got)
	}()
	id := tc.submitFor(uidOwner, script("live"))
	select {
	case ev := <-got:
		if ev != "event: changed" {
			t.Fatalf("after submitting job %d the stream said %q", id, ev)
		}
	case <-time.After(30 * time.Second): // a bound on the wait, not a timing claim
		t.Fatalf("no event within 30 s of submitting job %d", id)
	}
}

// The launch dialog starts N identical sessions as the signed-in user,
// and a launch the controller or the dialog refuses starts none.
func TestDashboardLaunch(t *testing.T) {
	tc := MustServer(t, withPartitions(matrixConf), func(c *Config) { c.WebListen = "127.0.0.1:0" })
	base := "http://" + tc.srv.web.Addr()
	b := newBrowser(t, base)
	signIn(t, tc, b, uidOwner)
	code, page := b.get("/launch")
	if code != 200 || !strings.Contains(page, `name="sessions"`) || !strings.Contains(page, "corral submit") {
		t.Fatalf("the launch dialog: %d\n%s", code, page)
	}
	form := func(kv ...string) url.Values {
		v := url.Values{"csrf": {csrfRE(page)}, "cpus": {"1"}, "mem_mib": {"256"}, "sessions": {"3"}, "group": {"batch"}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	owned := func() []api.Job {
		jobs, err := tc.client.Jobs(context.Background(), api.JobFilter{Users: []string{"sys"}})
		if err != nil {
			t.Fatal(err)
		}
		return jobs
	}
	for _, bad := range []struct {
		form url.Values
		want string
	}{
		{form("name", "ab"), "4 to 64 letters and digits"},
		{form("sessions", "11"), "sessions: give a whole number from 1 to 10"},
		{form("mount", "relative:/x"), "folder to mount"},
		{form("group", "nosuchgroup"), "nosuchgroup"},
	} {
		code, out := b.post("/launch", bad.form, base)
		if code != http.StatusBadRequest || !strings.Contains(out, bad.want) {
			t.Errorf("launch %v: %d, want 400 saying %q", bad.form, code, bad.want)
		}
	}
	if n := len(owned()); n != 0 {
		t.Fatalf("refused launches started %d sessions", n)
	}
	if code, _ := b.post("/launch", form("name", "nb01"), base); code != http.StatusSeeOther {
		t.Fatalf("launch: %d, want a redirect", code)
	}
	jobs := owned()
	if len(jobs) != 3 {
		t.Fatalf("launched %d sessions, want 3", len(jobs))
	}
	for _, j := range jobs {
		if j.Name != "nb01" || j.Spec.MemBytes != 256<<20 || j.Spec.CPUs != 1 || !strings.Contains(j.Spec.Script, "interactive session") {
			t.Errorf("launched job %d: name %q mem %d cpus %d", j.ID, j.Name, j.Spec.MemBytes, j.Spec.CPUs)
		}
	}
}
