package web

import (
	"embed"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
)

// Controller is how the dashboard reaches the controller.
type Controller interface {
	// As is a user-plane client acting as uid.
	As(uid uint32) *api.Client
	// LookupUser is the uid of a user name (the trusted header's value).
	LookupUser(name string) (uint32, error)
	// Home is uid's home directory, a launched session's work directory.
	Home(uid uint32) string
}

// Config configures a Dashboard.
type Config struct {
	Controller Controller
	// BaseURL is how browsers reach the dashboard (http://host:port), for
	// login links; it is also the one origin state-changing requests and
	// websockets may come from.
	BaseURL string
	// Secure marks cookies Secure: set it when BaseURL is https.
	Secure bool
	// TrustedHeader, when set, is a request header that names the user
	// (a reverse proxy's single sign-on sets it). Off by default: only set
	// it when nothing but that proxy can reach the dashboard.
	TrustedHeader string
	// SessionTTL is how long a browser stays signed in (default 12 h).
	SessionTTL time.Duration
	// LinkTTL is how long a login link may wait to be opened (default a
	// minute; tests shorten it to see one expire).
	LinkTTL time.Duration
	Logger  *log.Logger
	Now     func() time.Time // tests move the clock

	// Apps opens sessions' web apps for /apps/ (apps.go); nil serves none.
	Apps Apps
}

// Dashboard serves the pages. Its zero value is not usable: call New.
type Dashboard struct {
	cfg    Config
	signIn *signIns
	live   *changes
	origin string // scheme://host[:port] of BaseURL
	apps   *appTransports
}

// static holds the stylesheet and script, served under /static/.
//
//go:embed static
var static embed.FS

// New checks cfg and returns its dashboard.
func New(cfg Config) (*Dashboard, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("dashboard base URL %q: want http://HOST:PORT or https://HOST:PORT", cfg.BaseURL)
	}
	if cfg.Controller == nil {
		return nil, errors.New("dashboard: no controller")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = log.Default()
	}
	cfg.Secure = cfg.Secure || u.Scheme == "https"
	return &Dashboard{cfg: cfg, signIn: newSignIns(cfg.SessionTTL, cfg.LinkTTL), live: newChanges(), origin: u.Scheme + "://" + u.Host,
		apps: newAppTransports()}, nil
}

// Origin is where browsers reach the dashboard (scheme://host:port).
func (d *Dashboard) Origin() string { return d.origin }

// LoginURL is a one-time sign-in link for uid, valid for a minute.
func (d *Dashboard) LoginURL(uid uint32) string {
	return d.origin + "/login?token=" + d.signIn.newLink(uid, d.cfg.Now())
}

// LogoutAll ends uid's browser sessions and unused links; it says how
// many sessions there were.
func (d *Dashboard) LogoutAll(uid uint32) int { return d.signIn.endAll(uid) }

// Handler is the dashboard's HTTP handler.
func (d *Dashboard) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", d.login)
	mux.Handle("GET /static/", http.FileServerFS(static))
	mux.HandleFunc("GET /{$}", d.signedIn(d.sessionsPage))
	mux.HandleFunc("GET /events", d.signedIn(d.events))
	mux.HandleFunc("GET /launch", d.signedIn(d.launchPage))
	mux.HandleFunc("POST /launch", d.signedIn(d.launchBody(d.changing(d.launch))))
	mux.HandleFunc("POST /jobs/{id}/terminate", d.signedIn(d.changing(d.terminate)))
	mux.HandleFunc("GET /jobs/{id}/terminal", d.signedIn(d.terminalPage))
	mux.HandleFunc("GET /jobs/{id}/terminal/ws", d.signedIn(d.terminalSocket)) // terminal.go
	mux.HandleFunc("POST /logout", d.signedIn(d.changing(d.logout)))
	d.historyRoutes(mux)
	mux.HandleFunc(appsRoute, d.signedIn(d.app)) // apps.go
	return securityHeaders(mux)
}

// securityHeaders: the pages load nothing from elsewhere and are never
// framed.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		// A login link must not leak to another site; "no-referrer" would
		// also make browsers send "Origin: null" on the pages' own forms,
		// which the origin check refuses.
		w.Header().Set("Referrer-Policy", "same-origin")
		h.ServeHTTP(w, r)
	})
}

// login redeems a one-time link: a session cookie, then the sessions page.
func (d *Dashboard) login(w http.ResponseWriter, r *http.Request) {
	tok, _, ok := d.signIn.redeem(r.URL.Query().Get("token"), d.cfg.Now())
	if !ok {
		d.problem(w, http.StatusForbidden, "This sign-in link is unknown, used or expired (links last a minute and work once). Run `corral dashboard` for a new one.")
		return
	}
	d.setCookie(w, tok)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (d *Dashboard) setCookie(w http.ResponseWriter, tok string) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: tok, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: d.cfg.Secure, MaxAge: int(d.signIn.ttl / time.Second)})
}

// signedInHandler is a handler for a signed-in browser.
type signedInHandler func(w http.ResponseWriter, r *http.Request, sess *session, tok string)

// signedIn passes h the request's session: its cookie's, or one the
// trusted header opens; without one it answers 401.
func (d *Dashboard) signedIn(h signedInHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		now := d.cfg.Now()
		if c, err := r.Cookie(cookieName); err == nil {
			if sess, ok := d.signIn.lookup(c.Value, now); ok {
				h(w, r, sess, c.Value)
				return
			}
		}
		if name := d.trustedUser(r); name != "" {
			uid, err := d.cfg.Controller.LookupUser(name)
			if err != nil {
				d.problem(w, http.StatusForbidden, fmt.Sprintf("The sign-on header names %q, who is not a user here.", name))
				return
			}
			tok, sess := d.signIn.open(uid, now)
			d.setCookie(w, tok)
			h(w, r, sess, tok)
			return
		}
		d.problem(w, http.StatusUnauthorized, "You are not signed in. Run `corral dashboard` on a login node and open the link it prints.")
	}
}

func (d *Dashboard) trustedUser(r *http.Request) string {
	if d.cfg.TrustedHeader == "" {
		return ""
	}
	return strings.TrimSpace(r.Header.Get(d.cfg.TrustedHeader))
}

// changing guards a state-changing request: it must come from the
// dashboard's own origin and carry the session's CSRF token.
func (d *Dashboard) changing(h signedInHandler) signedInHandler {
	return func(w http.ResponseWriter, r *http.Request, sess *session, tok string) {
		if o := r.Header.Get("Origin"); o != "" && o != d.origin {
			d.problem(w, http.StatusForbidden, "Refused: the request came from another site ("+o+").")
			return
		}
		if !sess.csrfOK(r.PostFormValue("csrf")) {
			d.problem(w, http.StatusForbidden, "Refused: the form's security token is missing or stale. Reload the page and try again.")
			return
		}
		h(w, r, sess, tok)
	}
}

// terminate cancels a session (job), as `corral cancel` would for the
// signed-in user.
func (d *Dashboard) terminate(w http.ResponseWriter, r *http.Request, sess *session, _ string) {
	id, task, err := api.ParseJobRef(r.PathValue("id"))
	if err != nil {
		d.problem(w, http.StatusBadRequest, err.Error())
		return
	}
	req := api.CancelRequest{IDs: []uint64{id}}
	if task != nil {
		req = api.CancelRequest{Tasks: []api.TaskRef{{JobID: id, Task: *task}}}
	}
	resp, err := d.cfg.Controller.As(sess.uid).Cancel(r.Context(), req)
	if err != nil {
		d.apiProblem(w, err)
		return
	}
	for _, msg := range resp.Errors {
		d.problem(w, http.StatusForbidden, msg)
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (d *Dashboard) logout(w http.ResponseWriter, r *http.Request, _ *session, tok string) {
	d.signIn.end(tok)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: d.cfg.Secure})
	d.problem(w, http.StatusOK, "Signed out.")
}

// apiProblem shows a controller refusal with its status.
func (d *Dashboard) apiProblem(w http.ResponseWriter, err error) {
	var se *api.StatusError
	if errors.As(err, &se) {
		d.problem(w, se.Code, se.Message)
		return
	}
	d.cfg.Logger.Printf("dashboard: %v", err)
	d.problem(w, http.StatusBadGateway, "The controller did not answer: "+err.Error())
}
