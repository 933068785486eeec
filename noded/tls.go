package noded

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/corral-hpc/corral/api"
)

// nodeTLS is the node plane's TLS when ctld's URL is https: calls to
// ctld pin the cluster CA (Config.CAFile), and the node's own listener
// serves a certificate that ctld issues (POST /v1/node/cert, signed with
// the cluster key) for a key that never leaves this node. The certificate
// is fetched at the first handshake (ctld is up: it is the caller) and
// renewed when a third of its lifetime is left.
type nodeTLS struct {
	d *Daemon

	mu   sync.Mutex
	cert *tls.Certificate
}

// setupTLS prepares d.ctld and d.tls for an https ctld URL; for http
// (tests with a fake controller) it leaves both plain.
func (d *Daemon) setupTLS() error {
	if !strings.HasPrefix(d.cfg.CtldURL, "https://") {
		return nil
	}
	if d.cfg.CAFile == "" {
		return fmt.Errorf("--ctld %s is https: give --ca (the ca.pem from corral-ctld's state directory)", d.cfg.CtldURL)
	}
	pool, err := api.LoadCAPool(d.cfg.CAFile)
	if err != nil {
		return err
	}
	d.ctldTLS = api.ClientTLS(pool)
	d.ctld = api.NewNodeClientTLS(d.cfg.CtldURL, d.cfg.Key, 10*time.Second, d.ctldTLS)
	d.tls = &nodeTLS{d: d}
	return nil
}

// serverConfig is the listener's TLS configuration.
func (t *nodeTLS) serverConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS13, GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		return t.certificate(context.Background())
	}}
}

func (t *nodeTLS) certificate(ctx context.Context) (*tls.Certificate, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.cert; c != nil && time.Until(c.Leaf.NotAfter) > api.LeafLifetime/3 {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var resp api.NodeCertResponse
	req := api.NodeCertRequest{PublicKey: pub, Hosts: t.d.certHosts()}
	if err := t.d.ctld.Do(ctx, http.MethodPost, "/v1/node/cert", req, &resp); err != nil {
		if t.cert != nil { // keep serving the old one until it ends
			t.d.log.Printf("renewing the node certificate: %v", err)
			return t.cert, nil
		}
		return nil, fmt.Errorf("node certificate from ctld: %w", err)
	}
	c, err := api.LeafCertificate(resp.Cert, key)
	if err != nil {
		return nil, err
	}
	t.cert = &c
	return t.cert, nil
}

// certHosts: the advertised host (what ctld dials), the host name, and
// loopback.
func (d *Daemon) certHosts() []string {
	hosts := []string{"localhost", "127.0.0.1"}
	if h, _, err := net.SplitHostPort(d.addr); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	return hosts
}

// serve serves the node plane on d.ln, over TLS when ctld's URL is https.
func (d *Daemon) serve(srv *http.Server) error {
	if d.tls == nil {
		return srv.Serve(d.ln)
	}
	srv.TLSConfig = d.tls.serverConfig()
	return srv.ServeTLS(d.ln, "", "")
}
