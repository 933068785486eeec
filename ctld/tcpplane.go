package ctld

import (
	"net/http"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

// tcpHandler serves ctld's TCP listener: the node plane (signed with the
// cluster key) under /v1/node/, and the user plane for requests carrying
// a remote credential from a noded, with the same handlers and
// authorization as the Unix socket.
func tcpHandler(s *Server) http.Handler {
	node, user := nodeHandler(s), userHandler(s)
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
		if cred.Job != 0 && r.Method != http.MethodGet {
			s.log.Printf("from inside job %d on %s, uid %d: %s %s", cred.Job, cred.Host, cred.UID, r.Method, r.URL.Path)
		}
		user.ServeHTTP(w, r.WithContext(withPeer(r.Context(), peer{UID: cred.UID, GID: cred.GID})))
	})
}
