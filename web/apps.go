package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/corral-hpc/corral/api"
)

// Apps (seeds 002/003): a session publishes web apps (--app NAME=PORT);
// /apps/<job>/<name>/... reaches the app for the session's owner (and
// whoever else the controller lets act on the job), with the path passed
// through unchanged: the app serves under that base path itself
// (Jupyter's base_url, from CORRAL_APP_<NAME>_URL). HTTP and websockets
// both pass; the dashboard's own cookie never reaches the app.

// appsRoute is every request under an app's base path.
const appsRoute = "/apps/{job}/{name}/"

// AppTarget is one app the controller opened for a user: Dial reaches it
// (through its node) afresh for each connection.
type AppTarget struct {
	Node string
	Port int
	Dial func(ctx context.Context) (net.Conn, error)
}

// Apps is how the dashboard reaches sessions' apps.
type Apps interface {
	// OpenApp is job's app name, if uid may use it; a refusal is an
	// *api.StatusError with the status to answer.
	OpenApp(ctx context.Context, uid uint32, job uint64, name string) (AppTarget, error)
}

// app proxies one request to a session's app.
func (d *Dashboard) app(w http.ResponseWriter, r *http.Request, sess *session, _ string) {
	w.Header().Del("Content-Security-Policy") // the app's pages are the app's: it sets its own policy
	if d.cfg.Apps == nil {
		d.problem(w, http.StatusNotFound, "This dashboard serves no apps.")
		return
	}
	id, err := strconv.ParseUint(r.PathValue("job"), 10, 64)
	if err != nil {
		d.problem(w, http.StatusBadRequest, fmt.Sprintf("%q is not a job ID.", r.PathValue("job")))
		return
	}
	if isUpgrade(r) {
		// No CSRF token is possible on an upgrade: the origin check and
		// the SameSite=Strict cookie keep other sites' pages out.
		if o := r.Header.Get("Origin"); o != d.origin {
			d.problem(w, http.StatusForbidden, "Refused: a websocket to an app must come from the dashboard's own pages, not "+strconv.Quote(o)+".")
			return
		}
	}
	name := r.PathValue("name")
	t, err := d.cfg.Apps.OpenApp(r.Context(), sess.uid, id, name)
	if err != nil {
		d.apiProblem(w, err)
		return
	}
	d.appProxy(t, fmt.Sprintf("%d/%s/%s", id, name, t.Node)).ServeHTTP(w, r)
}

func isUpgrade(r *http.Request) bool {
	for _, v := range r.Header.Values("Connection") {
		for _, f := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), "upgrade") {
				return true
			}
		}
	}
	return false
}

// appProxy is the reverse proxy to t. It forwards the request as the
// browser sent it (path, Host, Origin) but for the dashboard's own
// credentials, and keeps the app from setting the dashboard's cookie.
func (d *Dashboard) appProxy(t AppTarget, key string) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Transport: d.apps.get(key, t),
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", pr.In.Host
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
			stripDashboardCredentials(pr.Out.Header, d.cfg.TrustedHeader)
		},
		ModifyResponse: func(resp *http.Response) error {
			keepOwnCookie(resp.Header)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			var se *api.StatusError
			if errors.As(err, &se) { // the node's refusal, in its words
				d.problem(w, se.Code, se.Message)
				return
			}
			d.problem(w, http.StatusBadGateway, fmt.Sprintf("The app on node %s did not answer: %v", t.Node, err))
		},
		FlushInterval: -1, // streams (server-sent events, long polls) pass as they come
	}
}

// stripDashboardCredentials removes the dashboard's session cookie, its
// CSRF token and the sign-on header from a request bound for an app.
func stripDashboardCredentials(h http.Header, trusted string) {
	if trusted != "" {
		h.Del(trusted)
	}
	h.Del(csrfHeader)
	cookies := h.Values("Cookie")
	h.Del("Cookie")
	var kept []string
	for _, line := range cookies {
		for _, c := range strings.Split(line, ";") {
			if name, _, _ := strings.Cut(strings.TrimSpace(c), "="); name != cookieName && strings.TrimSpace(c) != "" {
				kept = append(kept, strings.TrimSpace(c))
			}
		}
	}
	if len(kept) > 0 {
		h.Set("Cookie", strings.Join(kept, "; "))
	}
}

// csrfHeader is where a script may carry the CSRF token.
const csrfHeader = "X-Csrf-Token"

// keepOwnCookie drops an app's attempt to set the dashboard's cookie.
func keepOwnCookie(h http.Header) {
	all := h.Values("Set-Cookie")
	h.Del("Set-Cookie")
	for _, c := range all {
		if name, _, _ := strings.Cut(strings.TrimSpace(c), "="); name != cookieName {
			h.Add("Set-Cookie", c)
		}
	}
}

// appTransports keeps one transport per app and node, so a page's many
// requests reuse tunnels instead of opening one each. Bounded: when full,
// all are dropped (their idle tunnels closed) and built again as needed.
type appTransports struct {
	mu sync.Mutex
	m  map[string]*http.Transport
}

const maxAppTransports = 256

func newAppTransports() *appTransports { return &appTransports{m: map[string]*http.Transport{}} }

func (a *appTransports) get(key string, t AppTarget) *http.Transport {
	a.mu.Lock()
	defer a.mu.Unlock()
	if tr, ok := a.m[key]; ok {
		return tr
	}
	if len(a.m) >= maxAppTransports {
		for k, tr := range a.m {
			tr.CloseIdleConnections()
			delete(a.m, k)
		}
	}
	dial := t.Dial
	tr := &http.Transport{
		DialContext:         func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) },
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true, // the browser's Accept-Encoding goes to the app as sent
	}
	a.m[key] = tr
	return tr
}

// appLink is a running session's app as its row links it; the element
// carries data-app (the app's name) for tests and scripts.
type appLink struct{ Name, Path string }

// appLinks are job j's apps, while it runs (only then are they served).
func appLinks(j *api.Job) []appLink {
	if j.State != api.StateRunning {
		return nil
	}
	var out []appLink
	for _, a := range j.Spec.Apps {
		out = append(out, appLink{Name: a.Name, Path: api.AppPath(j.ID, a.Name)})
	}
	return out
}

// imageApps is an image's declared apps, as the launch dialog lists them.
type imageApps struct{ Ref, Apps string }

// declaredApps are the images that declare apps (their corral.apps label).
func declaredApps(images []api.Image) []imageApps {
	var out []imageApps
	for _, im := range images {
		if len(im.Apps) > 0 {
			out = append(out, imageApps{Ref: im.Ref, Apps: appsText(im.Apps)})
		}
	}
	return out
}

func appsText(apps []api.App) string {
	parts := make([]string, len(apps))
	for i, a := range apps {
		parts[i] = a.Name + "=" + strconv.Itoa(a.Port)
	}
	return strings.Join(parts, ", ")
}

// parseAppsField reads the launch dialog's apps: NAME=PORT entries
// separated by commas or spaces.
func parseAppsField(v string) ([]api.App, error) {
	var out []api.App
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
		a, err := api.ParseApp(f)
		if err != nil {
			return nil, fmt.Errorf("apps: %v", err)
		}
		out = append(out, a)
	}
	return out, nil
}

// imageAppsIfNone gives a launch that names no apps those its image
// declares, so a session of a Jupyter image serves Jupyter.
func imageAppsIfNone(ctx context.Context, c *api.Client, f *launchForm) error {
	if len(f.apps) > 0 || f.Image == "" {
		return nil
	}
	images, err := c.Images(ctx)
	if err != nil {
		return err
	}
	for _, im := range images {
		if im.Ref == f.Image && len(im.Apps) > 0 {
			f.apps, f.Apps = im.Apps, appsText(im.Apps)
			return nil
		}
	}
	return nil
}
