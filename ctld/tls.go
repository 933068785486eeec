package ctld

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
)

// clusterTLS is the controller's side of the cluster's TLS: the CA it
// certifies node keys with and its own TCP port's certificate comes from,
// and the client side that pins that CA and signs with the cluster key
// for calls to nodes. With Config.InsecurePlaintext (tests only) ca and
// client are nil: the port is plain HTTP and nodes are called over HTTP.
type clusterTLS struct {
	ca     *api.CA
	client *tls.Config // pins ca for calls to nodes
	key    []byte      // the cluster key, signing every call to a node
	sans   []string    // Config.TLSSANs
	log    *log.Logger
}

// loadClusterTLS loads (or creates) the cluster CA in the state directory.
// New calls it before the store's records are loaded, so the clients of
// nodes known from the store already pin it.
func loadClusterTLS(cfg *Config, key []byte) (*clusterTLS, error) {
	t := &clusterTLS{key: key, sans: cfg.TLSSANs, log: cfg.Logger}
	if cfg.InsecurePlaintext {
		return t, nil
	}
	ca, err := api.LoadOrCreateCA(cfg.StateDir)
	if err != nil {
		return nil, fmt.Errorf("TLS: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	t.ca, t.client = ca, api.ClientTLS(pool)
	return t, nil
}

// listener wraps the TCP listener in TLS with a certificate from the
// cluster CA. Without a CA it returns ln unchanged and says so in the
// log: plain HTTP is never chosen silently. It also returns the TLS
// configuration (nil for plain HTTP).
func (t *clusterTLS) listener(ln net.Listener) (net.Listener, *tls.Config, error) {
	if t.ca == nil {
		t.log.Printf("WARNING: --insecure-plaintext: the TCP port is plain HTTP (node traffic and remote users' requests are not encrypted)")
		return ln, nil, nil
	}
	cert, err := t.ca.Issue(t.certHosts(ln.Addr().(*net.TCPAddr)), time.Now())
	if err != nil {
		return nil, nil, fmt.Errorf("controller certificate: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	return tls.NewListener(ln, cfg), cfg, nil
}

// certHosts are the controller certificate's names: the listen address,
// loopback, the host name and addresses, and Config.TLSSANs.
func (t *clusterTLS) certHosts(a *net.TCPAddr) []string {
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
	hosts = append(hosts, t.sans...)
	slices.Sort(hosts)
	hosts = slices.Compact(hosts)
	return hosts[:min(len(hosts), 64)] // api.CA.Sign's bound
}

// scheme is how ctld is reached and reaches nodes: https when it serves TLS.
func (t *clusterTLS) scheme() string {
	if t.client != nil {
		return "https://"
	}
	return "http://"
}

// nodeCallTimeout bounds ctld's calls to a node (launch, signal).
const nodeCallTimeout = 10 * time.Second

// nodeClient is a signed client for a node's address (a base URL or a
// bare host:port), pinning the CA when the cluster runs TLS.
func (t *clusterTLS) nodeClient(addr string) *api.NodeClient {
	base := addr
	if !strings.Contains(base, "://") {
		base = t.scheme() + base
	}
	base = strings.TrimRight(base, "/")
	if t.client == nil {
		return api.NewNodeClient(base, t.key, nodeCallTimeout)
	}
	base = "https://" + strings.TrimPrefix(strings.TrimPrefix(base, "http://"), "https://")
	return api.NewNodeClientTLS(base, t.key, nodeCallTimeout, t.client)
}
