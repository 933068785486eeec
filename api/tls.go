package api

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"github.com/corral-hpc/corral/internal/fsutil"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// Traffic between hosts is TLS. ctld creates a certificate authority in
// its state directory on first start (CAFile, public; caKeyFile, 0600),
// serves its TCP port with a certificate from it, and signs each node's
// certificate (POST /v1/node/cert, authenticated with the cluster key).
// noded and the CLI pin the CA: they trust no other.

// CAFile is the CA certificate's name in ctld's state directory, and the
// default name beside the cluster key where noded and the CLI look for it.
const CAFile = "ca.pem"

const caKeyFile = "ca.key"

// Certificate lifetimes: the CA outlives any cluster; node and controller
// certificates are renewed before they end (a node asks again on restart
// or when less than a third of its lifetime is left).
const (
	caLifetime   = 20 * 365 * 24 * time.Hour
	LeafLifetime = 90 * 24 * time.Hour
)

// CA is the cluster's certificate authority.
type CA struct {
	Cert *x509.Certificate
	PEM  []byte
	key  *ecdsa.PrivateKey
}

// LoadOrCreateCA loads the CA in dir, creating an ECDSA P-256 one if
// there is none. A certificate without its key (or the reverse) is an
// error, never silently replaced: nodes have pinned it.
func LoadOrCreateCA(dir string) (*CA, error) {
	certPath, keyPath := filepath.Join(dir, CAFile), filepath.Join(dir, caKeyFile)
	certPEM, cerr := os.ReadFile(certPath)
	keyPEM, kerr := os.ReadFile(keyPath)
	switch {
	case cerr == nil && kerr == nil:
		return parseCA(certPEM, keyPEM, certPath)
	case errors.Is(cerr, os.ErrNotExist) && errors.Is(kerr, os.ErrNotExist):
	case cerr != nil && !errors.Is(cerr, os.ErrNotExist):
		return nil, cerr
	case kerr != nil && !errors.Is(kerr, os.ErrNotExist):
		return nil, kerr
	default:
		return nil, fmt.Errorf("cluster CA in %s is incomplete: %s and %s must both exist (restore them; nodes pin this CA)", dir, CAFile, caKeyFile)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: "corral cluster CA", Organization: []string{"corral"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// The key first: a crash between the two leaves a key without a
	// certificate, which is refused above rather than half-used.
	if err := fsutil.WriteFileAtomic(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, err
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := fsutil.WriteFileAtomic(certPath, certPEM, 0o644); err != nil {
		return nil, err
	}
	return parseCA(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), certPath)
}

func parseCA(certPEM, keyPEM []byte, path string) (*CA, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("cluster CA %s: not PEM", path)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("cluster CA %s: %v", path, err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("cluster CA key beside %s: %v", path, err)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("cluster CA %s does not match its key %s", path, caKeyFile)
	}
	return &CA{Cert: cert, PEM: certPEM, key: key}, nil
}

func randomSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}

// Sign issues a certificate for pub, valid as a TLS server and client for
// hosts (IP addresses or DNS names).
func (ca *CA) Sign(pub any, hosts []string, now time.Time) ([]byte, error) {
	if _, ok := pub.(*ecdsa.PublicKey); !ok {
		return nil, errors.New("certificate request: the public key must be ECDSA")
	}
	if len(hosts) == 0 || len(hosts) > 64 {
		return nil, errors.New("certificate request: give between 1 and 64 host names or addresses")
	}
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(),
		Subject:      pkix.Name{CommonName: hosts[0], Organization: []string{"corral"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(LeafLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" && len(h) <= 253 {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		} else {
			return nil, fmt.Errorf("certificate request: %q is not a host name or address", h)
		}
	}
	return x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, pub, ca.key)
}

// Issue makes a fresh key and a certificate for hosts: ctld's own.
func (ca *CA) Issue(hosts []string, now time.Time) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	der, err := ca.Sign(&key.PublicKey, hosts, now)
	if err != nil {
		return tls.Certificate{}, err
	}
	return LeafCertificate(der, key)
}

// LeafCertificate pairs a DER certificate with its key for tls.Config.
func LeafCertificate(der []byte, key *ecdsa.PrivateKey) (tls.Certificate, error) {
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// LoadCAPool reads a pinned CA certificate.
func LoadCAPool(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cluster CA: %w (copy ca.pem from corral-ctld's state directory, or give --ca)", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("cluster CA %s holds no PEM certificate", path)
	}
	return pool, nil
}

// ClientTLS trusts only the pinned CA.
func ClientTLS(pool *x509.CertPool) *tls.Config {
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13}
}

// NodeCertRequest asks ctld (POST /v1/node/cert, signed with the cluster
// key) to certify a node's public key for its hosts.
type NodeCertRequest struct {
	PublicKey []byte   `json:"public_key"` // PKIX DER
	Hosts     []string `json:"hosts"`
}

// NodeCertResponse is the node's certificate, DER.
type NodeCertResponse struct {
	Cert []byte `json:"cert"`
}

// NewNodeClientTLS is NewNodeClient over TLS with conf (ClientTLS).
func NewNodeClientTLS(baseURL string, key []byte, timeout time.Duration, conf *tls.Config) *NodeClient {
	tr := &http.Transport{TLSClientConfig: conf, MaxIdleConnsPerHost: 16, IdleConnTimeout: time.Minute}
	return &NodeClient{BaseURL: baseURL, Key: key, http: &http.Client{Timeout: timeout, Transport: tr}, tls: conf}
}

// WithTimeout is a client for the same node and transport with another
// timeout (image work takes longer than a launch).
func (c *NodeClient) WithTimeout(timeout time.Duration) *NodeClient {
	hc := *c.http
	hc.Timeout = timeout
	return &NodeClient{BaseURL: c.BaseURL, Key: c.Key, http: &hc, tls: c.tls}
}
