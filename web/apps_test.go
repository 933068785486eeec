package web

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// fakeApps opens one app, job 5's "nb", for uid 7 alone, dialing addr.
type fakeApps struct{ addr string }

func (f fakeApps) OpenApp(_ context.Context, uid uint32, job uint64, name string) (AppTarget, error) {
	switch {
	case uid != 7:
		return AppTarget{}, &api.StatusError{Code: http.StatusForbidden, Message: "job 5 belongs to someone else"}
	case job != 5 || name != "nb":
		return AppTarget{}, &api.StatusError{Code: http.StatusNotFound, Message: "no such app"}
	}
	return AppTarget{Node: "n1", Dial: func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", f.addr)
	}}, nil
}

// The proxy passes the path and the app's own cookies, never the
// dashboard's cookie, CSRF token or sign-on header; it drops an app's
// attempt to set the dashboard's cookie and leaves the app's pages
// their own security policy; it refuses another user (nothing reaches
// the app) and a websocket from another origin.
func TestAppProxyRequests(t *testing.T) {
	var seen []*http.Request
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r)
		w.Header().Add("Set-Cookie", cookieName+"=stolen; Path=/")
		w.Header().Add("Set-Cookie", "_xsrf=abc; Path=/apps/5/nb/")
		io.WriteString(w, r.URL.RequestURI())
	}))
	defer app.Close()
	d, err := New(Config{Controller: nopController{}, BaseURL: "http://dash.example:8080", TrustedHeader: "X-Remote-User",
		Apps: fakeApps{addr: app.Listener.Addr().String()}})
	if err != nil {
		t.Fatal(err)
	}
	h := d.Handler()
	owner, _ := d.signIn.open(7, d.cfg.Now())
	other, _ := d.signIn.open(8, d.cfg.Now())
	do := func(tok, path string, hdr ...string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "http://dash.example:8080"+path, nil)
		r.Header.Set("Cookie", cookieName+"="+tok+"; _xsrf=abc")
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}

	w := do(owner, "/apps/5/nb/tree?a=1", csrfHeader, "tok", "X-Remote-User", "root")
	if w.Code != 200 || w.Body.String() != "/apps/5/nb/tree?a=1" || len(seen) != 1 {
		t.Fatalf("owner: %d %q (%d requests reached the app)", w.Code, w.Body, len(seen))
	}
	in := seen[0]
	if c := in.Header.Get("Cookie"); c != "_xsrf=abc" {
		t.Errorf("the app got cookies %q, want only its own", c)
	}
	if in.Header.Get(csrfHeader) != "" || in.Header.Get("X-Remote-User") != "" {
		t.Errorf("the app got the dashboard's headers: %v", in.Header)
	}
	if in.Host != "dash.example:8080" {
		t.Errorf("the app saw Host %q, want the browser's", in.Host)
	}
	if sc := w.Header().Values("Set-Cookie"); len(sc) != 1 || !strings.HasPrefix(sc[0], "_xsrf=") {
		t.Errorf("cookies set through the proxy: %v, want the app's own only", sc)
	}
	if w.Header().Get("Content-Security-Policy") != "" {
		t.Errorf("the dashboard's policy was put on the app's page")
	}

	if w := do(other, "/apps/5/nb/tree"); w.Code != http.StatusForbidden || len(seen) != 1 {
		t.Errorf("another user: %d, %d requests reached the app; want 403 and none", w.Code, len(seen)-1)
	}
	if w := do(owner, "/apps/5/other/"); w.Code != http.StatusNotFound {
		t.Errorf("an unknown app: %d, want 404", w.Code)
	}
	if w := do("", "/apps/5/nb/"); w.Code != http.StatusUnauthorized {
		t.Errorf("signed out: %d, want 401", w.Code)
	}
	ws := []string{"Connection", "Upgrade", "Upgrade", "websocket", "Origin", "http://evil.example"}
	if w := do(owner, "/apps/5/nb/api/kernels/1/channels", ws...); w.Code != http.StatusForbidden || len(seen) != 1 {
		t.Errorf("a cross-origin websocket: %d, want 403 with nothing sent on", w.Code)
	}
}

// nopController is a controller the app proxy never calls.
type nopController struct{}

func (nopController) As(uint32) *api.Client             { return nil }
func (nopController) LookupUser(string) (uint32, error) { return 0, nil }
func (nopController) Home(uint32) string                { return "/" }

// The launch dialog's apps field publishes apps on the session, shown in
// the equivalent command; a bad entry is refused naming the field.
func TestLaunchApps(t *testing.T) {
	v := url.Values{"cpus": {"1"}, "mem_mib": {"256"}, "sessions": {"1"}, "apps": {"jupyter=8888, tb=6006"}}
	f, err := readLaunchForm(v, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec := f.spec("/home/u")
	want := []api.App{{Name: "jupyter", Port: 8888}, {Name: "tb", Port: 6006}}
	if !reflect.DeepEqual(spec.Apps, want) {
		t.Errorf("spec apps %+v, want %+v", spec.Apps, want)
	}
	if eq := f.Equivalent(); !strings.Contains(eq, "--app jupyter=8888 --app tb=6006") {
		t.Errorf("equivalent command lacks the apps: %s", eq)
	}
	v.Set("apps", "jupyter=80")
	if _, err := readLaunchForm(v, nil); err == nil || err.Error() != "apps: app jupyter: port 80 is not in 1024-65535" {
		t.Errorf("a bad app: %v", err)
	}
}
