package ctld

import (
	"io"
	"log"
	"net"
	"slices"
	"strings"
	"testing"
)

// Node clients use https exactly when the cluster runs TLS, whatever
// scheme a node's address was given with.
func TestClusterTLSNodeClientScheme(t *testing.T) {
	plain := &clusterTLS{key: []byte("k")}
	for _, addr := range []string{"10.0.0.1:6818", "http://10.0.0.1:6818/"} {
		if got := plain.nodeClient(addr).BaseURL; got != "http://10.0.0.1:6818" {
			t.Errorf("plaintext client for %q has base %q", addr, got)
		}
	}
	cfg := &Config{StateDir: t.TempDir(), Logger: log.New(io.Discard, "", 0)}
	secure, err := loadClusterTLS(cfg, []byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	if secure.ca == nil || secure.client == nil || secure.scheme() != "https://" {
		t.Fatalf("a TLS cluster has ca %v, client %v, scheme %q", secure.ca != nil, secure.client != nil, secure.scheme())
	}
	for _, addr := range []string{"10.0.0.1:6818", "http://10.0.0.1:6818", "https://10.0.0.1:6818/"} {
		if got := secure.nodeClient(addr).BaseURL; got != "https://10.0.0.1:6818" {
			t.Errorf("TLS client for %q has base %q", addr, got)
		}
	}
	insecure, err := loadClusterTLS(&Config{StateDir: t.TempDir(), InsecurePlaintext: true, Logger: cfg.Logger}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if insecure.ca != nil || insecure.scheme() != "http://" {
		t.Fatal("--insecure-plaintext still made a CA or an https scheme")
	}
}

// The certificate names loopback, the bound address and the configured
// SANs, each once, and no more than api.CA.Sign takes.
func TestClusterTLSCertHosts(t *testing.T) {
	c := &clusterTLS{sans: []string{"ctld.example", "ctld.example", "127.0.0.1"}}
	hosts := c.certHosts(&net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 6817})
	for _, want := range []string{"localhost", "127.0.0.1", "::1", "192.0.2.7", "ctld.example"} {
		if !slices.Contains(hosts, want) {
			t.Errorf("certificate hosts %v lack %s", hosts, want)
		}
	}
	if !slices.IsSorted(hosts) || len(slices.Compact(slices.Clone(hosts))) != len(hosts) {
		t.Errorf("certificate hosts %v repeat a name", hosts)
	}
	many := &clusterTLS{}
	for i := range 100 {
		many.sans = append(many.sans, "h"+strings.Repeat("x", i))
	}
	if n := len(many.certHosts(&net.TCPAddr{})); n != 64 {
		t.Errorf("%d certificate hosts, want api.CA.Sign's bound of 64", n)
	}
}
