package ctld

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/corral-hpc/corral/internal/fsutil"
)

// listeners are the controller's two listeners, the user plane's Unix
// socket and the TCP port (node plane and remote users), each charging
// its connections to the connection limits, and what their HTTP servers
// share: the timeouts, and the per-request steps that move a TCP
// connection's charge once a request says who is calling.
type listeners struct {
	user, tcp   net.Listener
	url         string // the TCP port's base URL, as written to ctld.addr
	readTimeout time.Duration
	idleTimeout time.Duration
}

// close releases both listeners.
func (l *listeners) close() {
	l.user.Close()
	l.tcp.Close()
}

// listen binds the user socket and the TCP port, each charging its
// connections to conns, and publishes the port's URL in <state>/ctld.addr.
func listen(cfg *Config, conns *connLimits, t *clusterTLS) (*listeners, error) {
	if err := os.MkdirAll(filepath.Dir(cfg.Socket), 0o755); err != nil {
		return nil, fmt.Errorf("socket directory: %w", err)
	}
	// A socket file left by a dead controller blocks bind. Removing it is
	// safe: we hold the state file's lock, so no live ctld of ours uses it.
	if st, err := os.Lstat(cfg.Socket); err == nil {
		if st.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("socket path %s exists and is not a socket", cfg.Socket)
		}
		os.Remove(cfg.Socket)
	}
	ul, err := net.Listen("unix", cfg.Socket)
	if err != nil {
		return nil, fmt.Errorf("user socket: %w", err)
	}
	ul = &limitedListener{Listener: ul, lim: conns, identify: conns.identifyLocal}
	// Every local user may connect; who they are comes from SO_PEERCRED.
	if err := os.Chmod(cfg.Socket, 0o666); err != nil {
		ul.Close()
		return nil, fmt.Errorf("user socket: %w", err)
	}
	nl, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		ul.Close()
		return nil, fmt.Errorf("node plane: %w", err)
	}
	tcpAddr := nl.Addr().(*net.TCPAddr)
	// Bounded below TLS, so a refused connection costs no handshake
	// unless it is answered.
	limited := &limitedListener{Listener: nl, lim: conns, identify: identifyRemote}
	if nl, limited.tls, err = t.listener(limited); err != nil {
		ul.Close()
		limited.Close()
		return nil, fmt.Errorf("TLS: %w", err)
	}
	l := &listeners{user: ul, tcp: nl, url: t.scheme() + strings.TrimPrefix(advertisedURL(tcpAddr), "http://"),
		readTimeout: cfg.ReadTimeout, idleTimeout: cfg.IdleTimeout}
	if err := fsutil.WriteFileAtomic(filepath.Join(cfg.StateDir, AddrFile), []byte(l.url+"\n"), 0o644); err != nil {
		ul.Close()
		nl.Close()
		return nil, fmt.Errorf("writing %s: %w", AddrFile, err)
	}
	return l, nil
}

// advertisedURL turns a bound address into a URL a local client can dial:
// a wildcard address becomes loopback.
func advertisedURL(a *net.TCPAddr) string {
	host := a.IP.String()
	if a.IP == nil || a.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, fmt.Sprint(a.Port))
}

// newHTTPServer is an http.Server with the controller's timeouts: a
// request's header and body must arrive within Config.ReadTimeout (the
// header within headerTimeout), and an idle keep-alive connection is
// closed after Config.IdleTimeout. There is no WriteTimeout: it would cut
// long polls (up to 5 minutes) and backups. ReadTimeout does not:
// net/http lifts the read deadline once the body is read
// (TestLongPollOutlivesReadTimeout).
func (l *listeners) newHTTPServer(h http.Handler, connCtx func(context.Context, net.Conn) context.Context) *http.Server {
	return &http.Server{
		Handler:           h,
		ConnContext:       connCtx,
		ErrorLog:          log.New(io.Discard, "", 0),
		ReadHeaderTimeout: min(headerTimeout, l.readTimeout),
		ReadTimeout:       l.readTimeout,
		IdleTimeout:       l.idleTimeout,
	}
}

type connCtxKey struct{}

func connFrom(ctx context.Context) *limitedConn {
	c, _ := ctx.Value(connCtxKey{}).(*limitedConn)
	return c
}

// localConnContext is the user socket's ConnContext: the peer read at
// accept, and the connection for later recharges.
func localConnContext(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*limitedConn); ok {
		ctx = context.WithValue(ctx, connCtxKey{}, lc)
		if lc.peer != nil {
			return withPeer(ctx, *lc.peer)
		}
		return ctx
	}
	return peerConnContext(ctx, c)
}

// remoteConnContext is the TCP port's ConnContext.
func remoteConnContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if lc, ok := c.(*limitedConn); ok {
		ctx = context.WithValue(ctx, connCtxKey{}, lc)
	}
	return ctx
}

// chargeRemote moves a TCP connection from its address to the uid a
// verified credential names. Over that uid's bound the request gets 429
// and the connection is closed after it; it reports whether to go on.
func (l *connLimits) chargeRemote(w http.ResponseWriter, r *http.Request, uid uint32) bool {
	lc := connFrom(r.Context())
	if lc == nil {
		return true
	}
	status, msg := lc.recharge(connKey{uid: uid}, l.exemptUID(uid))
	if status == 0 {
		return true
	}
	l.noteRefusal(msg)
	w.Header().Set("Connection", "close")
	w.Header().Set("Retry-After", "1")
	writeError(w, &answered{code: status, msg: msg})
	return false
}

// serveNodePlane serves a node-plane request; once one is accepted (its
// signature verified: anything but a 4xx or 5xx) the connection is a
// node's and leaves its address's bound, so a flood from a node's address
// does not cut a node daemon's established connection.
func serveNodePlane(h http.Handler, w http.ResponseWriter, r *http.Request) {
	sw := &statusWriter{ResponseWriter: w}
	h.ServeHTTP(sw, r)
	if lc := connFrom(r.Context()); lc != nil && sw.status < 400 {
		lc.recharge(connKey{host: "node plane"}, true)
	}
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}
