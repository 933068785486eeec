package ctld

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os/user"
	"strconv"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/web"
)

// webHost serves the dashboard (package web) for the controller
// (Config.WebListen): its listener, and the in-process user plane the
// dashboard reaches the controller through. A nil *webHost (no address
// configured) serves nothing.
type webHost struct {
	s    *Server
	ln   net.Listener
	user http.Handler // the user plane, served in process
	dash *web.Dashboard
}

var _ web.Controller = (*webHost)(nil)

// newWebHost binds cfg.WebListen ("" for no dashboard: nil, nil).
func newWebHost(s *Server, cfg *Config) (*webHost, error) {
	if cfg.WebListen == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", cfg.WebListen)
	if err != nil {
		return nil, fmt.Errorf("dashboard address: %w", err)
	}
	base := cfg.WebURL
	if base == "" {
		base = advertisedURL(ln.Addr().(*net.TCPAddr))
	}
	h := &webHost{s: s, ln: ln, user: userHandler(s)}
	if h.dash, err = web.New(web.Config{Controller: h, BaseURL: base, TrustedHeader: cfg.WebTrustedHeader,
		LinkTTL: cfg.WebLinkTTL, Logger: cfg.Logger, Apps: appProxy{s}}); err != nil {
		ln.Close()
		return nil, err
	}
	return h, nil
}

// As is a user-plane client acting as uid, served in process.
func (h *webHost) As(uid uint32) *api.Client { return clientAs(h.user, h.s.users, uid) }

// LookupUser is the uid of a user of this host's user database.
func (h *webHost) LookupUser(name string) (uint32, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, err
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	return uint32(uid), err
}

// Home is uid's home directory ("/" if the user database has none).
func (h *webHost) Home(uid uint32) string {
	if a, err := h.s.users.get(uid); err == nil && a.Home != "" {
		return a.Home
	}
	return "/"
}

// serve runs until ctx ends.
func (h *webHost) serve(ctx context.Context) {
	if h == nil {
		return
	}
	srv := &http.Server{Handler: h.dash.Handler(), ReadHeaderTimeout: headerTimeout,
		ReadTimeout: h.s.cfg.ReadTimeout, IdleTimeout: h.s.cfg.IdleTimeout, ErrorLog: log.New(io.Discard, "", 0)}
	h.s.log.Printf("serving the dashboard at %s (sign in with corral dashboard)", h.dash.Origin())
	if err := serveUntil(ctx, srv, h.ln); err != nil {
		h.s.log.Printf("dashboard: %v", err)
	}
}

// changed tells the dashboard's live pages that the jobs changed.
func (h *webHost) changed() {
	if h != nil {
		h.dash.Changed()
	}
}

// close releases the listener (serve may not have run).
func (h *webHost) close() {
	if h != nil {
		h.ln.Close()
	}
}

// Addr is where the dashboard is served ("" without one).
func (h *webHost) Addr() string {
	if h == nil {
		return ""
	}
	return h.ln.Addr().String()
}
