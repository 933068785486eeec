package ctld

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

// maxRememberedNonces bounds the replay cache. Only holders of the
// cluster key mint credentials, so reaching it means a misbehaving node;
// then new credentials are refused (503) rather than memory growing.
const maxRememberedNonces = 1 << 20

// nonceCache remembers the nonces of accepted credentials until they
// expire, so each credential is accepted once.
type nonceCache struct {
	mu    sync.Mutex
	seen  map[string]int64 // nonce -> expiry, unix seconds
	swept int64
}

// use records nonce; false if it was already used.
func (c *nonceCache) use(nonce string, expires int64, now time.Time) (fresh bool, full bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = make(map[string]int64)
	}
	if t := now.Unix(); t > c.swept {
		c.swept = t
		for n, exp := range c.seen {
			if exp < t {
				delete(c.seen, n)
			}
		}
	}
	if _, dup := c.seen[nonce]; dup {
		return false, false
	}
	if len(c.seen) >= maxRememberedNonces {
		return false, true
	}
	c.seen[nonce] = expires
	return true, false
}

// tcpHandler serves ctld's TCP listener: the node plane (signed with the
// cluster key) under /v1/node/, and the user plane for requests carrying
// a remote credential from a noded, with the same handlers and
// authorization as the Unix socket.
func (s *Server) tcpHandler() http.Handler {
	node, user := s.nodeHandler(), s.userHandler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/node/") {
			serveNodePlane(node, w, r)
			return
		}
		tok := r.Header.Get(api.CredentialHeader)
		if tok == "" {
			writeError(w, fault.Errorf(fault.Unauthenticated, "no credential: over TCP the user plane needs a %s header from the local corral-noded's credential socket", api.CredentialHeader))
			return
		}
		now := time.Now()
		cred, err := api.DecodeCredential(s.key, tok, now)
		if err != nil {
			writeError(w, fault.Errorf(fault.Unauthenticated, "%v", err))
			return
		}
		switch fresh, full := s.nonces.use(cred.Nonce, cred.Expires, now); {
		case full:
			writeError(w, fault.Errorf(fault.Unavailable, "too many credentials in flight; retry shortly"))
			return
		case !fresh:
			writeError(w, fault.Errorf(fault.Unauthenticated, "credential was already used (replayed); get a new one for each request"))
			return
		}
		if !s.conns.chargeRemote(w, r, cred.UID) { // the uid's connection bound
			return
		}
		user.ServeHTTP(w, r.WithContext(withPeer(r.Context(), peer{UID: cred.UID, GID: cred.GID})))
	})
}
