package ctld

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

func withTLS(c *Config) { c.InsecurePlaintext = false; c.TLSSANs = []string{"ctl.example.org"} }

// mustTLSFakeNode is a fake node serving TLS with a certificate ctld
// issued it through POST /v1/node/cert.
func mustTLSFakeNode(t *testing.T, tc *testCluster, name string) *fakeNode {
	t.Helper()
	f := newFakeNode(tc, name, 4, 8<<30)
	f.srv.Close()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	var resp api.NodeCertResponse
	if err := f.ctld().Do(context.Background(), "POST", "/v1/node/cert", api.NodeCertRequest{PublicKey: pub, Hosts: []string{"127.0.0.1"}}, &resp); err != nil {
		t.Fatalf("node certificate: %v", err)
	}
	cert, err := api.LeafCertificate(resp.Cert, key)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	f.srv.StartTLS()
	t.Cleanup(f.srv.Close)
	return f
}

// TestTLSBetweenHosts: ctld creates a CA on first start and keeps it,
// serves TLS only, issues node certificates to holders of the cluster key
// only, and launches on a node over TLS pinned to the CA.
func TestTLSBetweenHosts(t *testing.T) {
	tc := MustServer(t, withTLS)
	if !strings.HasPrefix(tc.srv.NodeURL(), "https://127.0.0.1:") {
		t.Fatalf("NodeURL %s, want https", tc.srv.NodeURL())
	}
	caPath := filepath.Join(tc.cfg.StateDir, api.CAFile)
	caPEM, err := os.ReadFile(caPath)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(tc.cfg.StateDir, "ca.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("ca.key: %v %v", st, err)
	}
	pool, err := api.LoadCAPool(caPath)
	if err != nil {
		t.Fatal(err)
	}
	// The server certificate names what the brief asks, and chains to the CA.
	conn, err := tls.Dial("tcp", strings.TrimPrefix(tc.srv.NodeURL(), "https://"), &tls.Config{RootCAs: pool, ServerName: "ctl.example.org"})
	if err != nil {
		t.Fatalf("TLS with the pinned CA and a --tls-san name: %v", err)
	}
	leaf := conn.ConnectionState().PeerCertificates[0]
	conn.Close()
	for _, want := range []string{"localhost", "ctl.example.org"} {
		if !strings.Contains(strings.Join(leaf.DNSNames, ","), want) {
			t.Errorf("certificate names %v lack %s", leaf.DNSNames, want)
		}
	}
	// Plain HTTP and a client that does not pin the CA get nothing.
	if resp, err := http.Get("http" + strings.TrimPrefix(tc.srv.NodeURL(), "https") + "/v1/ping"); err == nil {
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			t.Fatalf("plain HTTP was served: %d", resp.StatusCode)
		}
	}
	if _, err := http.Get(tc.srv.NodeURL() + "/v1/ping"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a client without the CA: %v", err)
	}
	// Only the cluster key gets a certificate.
	stranger := api.NewNodeClientTLS(tc.srv.NodeURL(), []byte("not the cluster key at all......"), 5*time.Second, api.ClientTLS(pool))
	if err := stranger.Do(context.Background(), "POST", "/v1/node/cert", api.NodeCertRequest{Hosts: []string{"x"}}, nil); err == nil ||
		!strings.Contains(err.Error(), "bad signature") {
		t.Fatalf("certificate for a stranger: %v", err)
	}
	// A node with a certificate from ctld gets a launch over TLS.
	f := mustTLSFakeNode(t, tc, "n1")
	f.register()
	id := tc.submit(script("over-tls"))
	if got := f.waitLaunch(); got.JobID != id {
		t.Fatalf("launched %d, want %d", got.JobID, id)
	}
	// The CA survives a restart: nodes have pinned it.
	tc.Restart()
	if again, _ := os.ReadFile(caPath); !bytes.Equal(again, caPEM) {
		t.Fatal("the CA changed across a restart")
	}
	// A node known from the store is reached over TLS too.
	f.register()
	id2 := tc.submit(script("after-restart"))
	if got := f.waitLaunch(); got.JobID != id2 {
		t.Fatalf("after a restart launched %d, want %d", got.JobID, id2)
	}
}

func TestCARefusesHalfState(t *testing.T) {
	dir := t.TempDir()
	if _, err := api.LoadOrCreateCA(dir); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "ca.key"))
	if _, err := api.LoadOrCreateCA(dir); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Fatalf("CA without its key: %v", err)
	}
}

// TestLostKeyOrCAIsNotMadeAnew: a state directory a controller has run on
// refuses to start when its cluster key or CA is gone (nodes hold the key
// and pin the CA; new ones would lock them out), naming what to restore.
// A fresh directory holding only a restored backup copy still starts.
func TestLostKeyOrCAIsNotMadeAnew(t *testing.T) {
	tc := MustServer(t, func(c *Config) { c.InsecurePlaintext = false })
	tc.submit(script("kept"))
	tc.Stop()
	state := tc.cfg.StateDir
	key := filepath.Join(state, KeyFile)
	for _, lose := range []string{key, filepath.Join(state, api.CAFile)} {
		saved, err := os.ReadFile(lose)
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(lose)
		_, err = New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), "is missing, but a controller has run") || !strings.Contains(err.Error(), "restore") {
			t.Fatalf("start without %s: %v, want a refusal naming what to restore", filepath.Base(lose), err)
		}
		if _, err := os.Stat(lose); !os.IsNotExist(err) {
			t.Fatalf("the refused start made %s anew", filepath.Base(lose))
		}
		if err := os.WriteFile(lose, saved, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tc.start() // both back: it starts as before

	// A new controller host: only the backup copy of ctld.db, no marker.
	tc.Stop()
	fresh := filepath.Join(t.TempDir(), "state")
	os.MkdirAll(fresh, 0o755)
	db, err := os.ReadFile(filepath.Join(state, "ctld.db"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(fresh, "ctld.db"), db, 0o600)
	cfg := tc.cfg
	cfg.StateDir, cfg.KeyFile = fresh, ""
	srv, err := New(cfg)
	if err != nil {
		t.Fatalf("a fresh directory with a restored copy: %v", err)
	}
	srv.Close()
}
