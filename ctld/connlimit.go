package ctld

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corral-hpc/corral/api"
)

// Connection bounds. A connection is a file descriptor for as long as it
// stays open, and the controller has a fixed number of them: one user
// holding thousands of connections (idle keep-alives, slow bodies) once
// left root's requests unanswered. So every connection is charged, at
// accept, to whoever made it, and each listener's server closes what
// lingers (listeners.newHTTPServer).
const (
	DefaultMaxConnsPerUser = 256 // open connections per uid (socket and remote)
	DefaultMaxConnsPerHost = 256 // TCP connections per address not yet identified
	DefaultReadTimeout     = 30 * time.Second
	DefaultIdleTimeout     = time.Minute
	// headerTimeout bounds a request's header: clients send it at once.
	headerTimeout = 10 * time.Second
	// fdReserve is what the automatic total leaves of the descriptor limit
	// for root, administrators, nodes, the state file and outbound calls.
	fdReserve = 1024
	// maxAutoConns caps the automatic total: each connection costs memory
	// too (a goroutine and buffers), and no site needs more at once.
	maxAutoConns = 8192
	// maxRefusing bounds the refusals being written at once; past it a
	// connection over its bound is closed without an answer.
	maxRefusing = 64
)

// connKey is whom a connection is charged to: a uid, or, on the TCP port
// before any request said who is calling, the peer's address.
type connKey struct {
	uid  uint32
	host string
}

func (k connKey) String() string {
	if k.host != "" {
		return "address " + k.host
	}
	return fmt.Sprintf("uid %d", k.uid)
}

// connLimits counts open connections per key and in total. Exempt ones
// (root, administrators, node daemons) are not bounded: the descriptors
// the total leaves (fdReserve at least) are theirs.
type connLimits struct {
	perUser, perHost int // <= 0: unbounded
	total            int // connections charged, all keys together
	logf             func(string, ...any)
	exemptUID        func(uid uint32) bool // root and administrators
	refusing         chan struct{}

	mu       sync.Mutex
	open     map[connKey]int
	counted  int // charged to total
	exempt   int
	refused  int // since the last log line
	loggedAt time.Time
}

// newConnLimits takes its bounds from cfg; exemptUID says which uids
// (root, administrators) are not bounded.
func newConnLimits(cfg *Config, exemptUID func(uid uint32) bool) *connLimits {
	return &connLimits{perUser: cfg.MaxConnsPerUser, perHost: cfg.MaxConnsPerHost, total: cfg.MaxConns,
		logf: cfg.Logger.Printf, exemptUID: exemptUID, refusing: make(chan struct{}, maxRefusing), open: make(map[connKey]int)}
}

// autoMaxConns is the default total: the descriptor limit less the
// reserve (half of it when the limit is small), at most maxAutoConns.
func autoMaxConns() int {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == unix.RLIM_INFINITY {
		return maxAutoConns
	}
	n := int(min(rl.Cur, 1<<30))
	if n >= 2*fdReserve {
		n -= fdReserve
	} else {
		n /= 2
	}
	return max(1, min(n, maxAutoConns))
}

// chargeLocked admits a connection to k, or says why not (an HTTP status
// and one line). counted says the connection is already in the total.
func (l *connLimits) chargeLocked(k connKey, exempt, counted bool) (int, string) {
	if exempt {
		l.exempt++
		return 0, ""
	}
	bound := l.perUser
	if k.host != "" {
		bound = l.perHost
	}
	if n := l.open[k]; bound > 0 && n >= bound {
		return http.StatusTooManyRequests, fmt.Sprintf("too many connections: %s already has %d open to the controller (the bound is %d); close some and retry", k, n, bound)
	}
	if !counted && l.counted >= l.total {
		return http.StatusServiceUnavailable, fmt.Sprintf("the controller holds its bound of %d user connections; retry shortly", l.total)
	}
	l.open[k]++
	if !counted {
		l.counted++
	}
	return 0, ""
}

func (l *connLimits) releaseLocked(k connKey, exempt, keepCount bool) {
	if exempt {
		l.exempt--
		return
	}
	if l.open[k]--; l.open[k] <= 0 {
		delete(l.open, k)
	}
	if !keepCount {
		l.counted--
	}
}

// noteRefusal logs refusals, one line per 10 s at most: a flood must not
// fill the log too.
func (l *connLimits) noteRefusal(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refused++
	if now := time.Now(); now.Sub(l.loggedAt) >= 10*time.Second {
		l.logf("refused %d connection(s) since the last such line; the latest: %s", l.refused, msg)
		l.refused, l.loggedAt = 0, now
	}
}

// openFor is how many charged connections k holds (for tests).
func (l *connLimits) openFor(k connKey) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open[k]
}

// limitedConn is a connection charged to a key until it closes.
type limitedConn struct {
	net.Conn
	lim  *connLimits
	peer *peer // the Unix socket's peer credentials, read at accept

	mu     sync.Mutex
	key    connKey
	exempt bool
	closed bool
}

func (c *limitedConn) Close() error {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		c.lim.mu.Lock()
		c.lim.releaseLocked(c.key, c.exempt, false)
		c.lim.mu.Unlock()
	}
	c.mu.Unlock()
	return c.Conn.Close()
}

// recharge moves the connection to k once a request says who is calling;
// over k's bound it stays where it was and the reason is returned.
func (c *limitedConn) recharge(k connKey, exempt bool) (int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.key == k && c.exempt == exempt {
		return 0, ""
	}
	c.lim.mu.Lock()
	defer c.lim.mu.Unlock()
	if status, msg := c.lim.chargeLocked(k, exempt, !c.exempt); status != 0 {
		return status, msg
	}
	c.lim.releaseLocked(c.key, c.exempt, !exempt) // to an exempt key: out of the total
	c.key, c.exempt = k, exempt
	return 0, ""
}

// limitedListener charges each accepted connection to whom identify
// names, and answers one over its bound with a 429 (503 when the total
// is full) and closes it: the client gets one clear line, not a hang.
type limitedListener struct {
	net.Listener
	lim      *connLimits
	identify func(net.Conn) (key connKey, p *peer, exempt bool)
	tls      *tls.Config // refusals on a TLS port are spoken in TLS
}

func (ln *limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		k, p, exempt := ln.identify(c)
		ln.lim.mu.Lock()
		status, msg := ln.lim.chargeLocked(k, exempt, false)
		ln.lim.mu.Unlock()
		if status == 0 {
			return &limitedConn{Conn: c, lim: ln.lim, peer: p, key: k, exempt: exempt}, nil
		}
		ln.lim.noteRefusal(msg)
		select {
		case ln.lim.refusing <- struct{}{}:
			go func() {
				defer func() { <-ln.lim.refusing }()
				if ln.tls != nil {
					c = tls.Server(c, ln.tls)
				}
				writeRefusal(c, status, msg)
			}()
		default: // refusals in flight already hold enough descriptors
			c.Close()
		}
	}
}

// writeRefusal answers c's first request with status and closes it. It
// half-closes and drains what the client sent first, so that closing with
// unread input does not turn into a reset that loses the answer.
func writeRefusal(c net.Conn, status int, msg string) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	body, _ := json.Marshal(api.Error{Error: msg})
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s\n",
		status, http.StatusText(status), len(body)+1, body)
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	io.Copy(io.Discard, io.LimitReader(c, 64<<10))
}

// identifyLocal charges a user-socket connection to its peer's uid (the
// kernel's, SO_PEERCRED); root and administrators are exempt.
func (l *connLimits) identifyLocal(c net.Conn) (connKey, *peer, bool) {
	p, ok := peerOfConn(c)
	if !ok {
		return connKey{host: "unidentified local peer"}, nil, false
	}
	return connKey{uid: p.UID}, &p, l.exemptUID(p.UID)
}

// identifyRemote charges a TCP connection to its address until a request
// proves a node (exempt) or a remote user's uid (connLimits.chargeRemote).
func identifyRemote(c net.Conn) (connKey, *peer, bool) {
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		host = c.RemoteAddr().String()
	}
	return connKey{host: host}, nil, false
}
