package ctld

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

// secureListener wraps the TCP listener in TLS with a certificate from
// the cluster CA (created in the state directory on first start), and
// prepares the client side that pins the CA for calls to nodes. With
// Config.InsecurePlaintext (tests only) it returns ln unchanged and says
// so in the log: plain HTTP is never chosen silently. It also returns the
// TLS configuration (nil for plain HTTP).
func (s *Server) secureListener(ln net.Listener) (net.Listener, *tls.Config, error) {
	if s.ca == nil {
		s.log.Printf("WARNING: --insecure-plaintext: the TCP port is plain HTTP (node traffic and remote users' requests are not encrypted)")
		return ln, nil, nil
	}
	cert, err := s.ca.Issue(s.certHosts(ln.Addr().(*net.TCPAddr)), time.Now())
	if err != nil {
		return nil, nil, fmt.Errorf("controller certificate: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	return tls.NewListener(ln, cfg), cfg, nil
}

// loadCA loads (or creates) the cluster CA before the store's records are loaded, so
// the clients of nodes known from the store already pin it.
func (s *Server) loadCA() error {
	if s.cfg.InsecurePlaintext {
		return nil
	}
	ca, err := api.LoadOrCreateCA(s.cfg.StateDir)
	if err != nil {
		return fmt.Errorf("TLS: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	s.ca, s.nodeTLS = ca, api.ClientTLS(pool)
	return nil
}

// certHosts are the controller certificate's names: the listen address,
// loopback, the host name and addresses, and Config.TLSSANs.
func (s *Server) certHosts(a *net.TCPAddr) []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if a.IP != nil && !a.IP.IsUnspecified() {
		hosts = append(hosts, a.IP.String())
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, ad := range addrs {
			if n, ok := ad.(*net.IPNet); ok && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
				hosts = append(hosts, n.IP.String())
			}
		}
	}
	hosts = append(hosts, s.cfg.TLSSANs...)
	slices.Sort(hosts)
	hosts = slices.Compact(hosts)
	return hosts[:min(len(hosts), 64)] // api.CA.Sign's bound
}

// schemeForNodes is how ctld reaches nodes: https when it serves TLS.
func (s *Server) schemeForNodes() string {
	if s.nodeTLS != nil {
		return "https://"
	}
	return "http://"
}

// newNodeClient is a signed client for a node's base URL, pinning the CA
// when the cluster runs TLS.
func (s *Server) newNodeClient(base string, timeout time.Duration) *api.NodeClient {
	if s.nodeTLS == nil {
		return api.NewNodeClient(base, s.key, timeout)
	}
	base = "https://" + strings.TrimPrefix(strings.TrimPrefix(base, "http://"), "https://")
	return api.NewNodeClientTLS(base, s.key, timeout, s.nodeTLS)
}

// handleNodeCert serves POST /v1/node/cert: a node (the request is signed
// with the cluster key, see verified) gets its public key certified for
// the hosts it serves on, so ctld can reach it over TLS pinned to the CA.
func (s *Server) handleNodeCert(w http.ResponseWriter, r *http.Request) {
	if s.ca == nil {
		writeError(w, fault.Errorf(fault.Conflict, "this controller runs with --insecure-plaintext: it issues no certificates"))
		return
	}
	var req api.NodeCertRequest
	if err := decodeBody(r.Body, &req, false); err != nil {
		writeError(w, err)
		return
	}
	pub, err := x509.ParsePKIXPublicKey(req.PublicKey)
	if err != nil {
		writeError(w, fault.Errorf(fault.Invalid, "certificate request: bad public key: %v", err))
		return
	}
	if _, ok := pub.(*ecdsa.PublicKey); !ok {
		writeError(w, fault.Errorf(fault.Invalid, "certificate request: the public key must be ECDSA"))
		return
	}
	der, err := s.ca.Sign(pub, req.Hosts, time.Now())
	if err != nil {
		writeError(w, fault.Errorf(fault.Invalid, "%v", err))
		return
	}
	s.log.Printf("certified a node key for %s", strings.Join(req.Hosts, ","))
	writeJSON(w, http.StatusOK, api.NodeCertResponse{Cert: der})
}
