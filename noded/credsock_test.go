package noded

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// TestCredentialSocket: the socket vouches for the uid and gid the kernel
// reports for the caller, signed with the cluster key, with a fresh nonce
// each time; the socket is gone after stop.
func TestCredentialSocket(t *testing.T) {
	dir := t.TempDir()
	key := []byte("0123456789abcdef0123456789abcdef")
	d := &Daemon{cfg: Config{Name: "login1", Key: key, CredSocket: filepath.Join(dir, "run", "cred.sock")}}
	stop, err := d.startCredentials(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(d.cfg.CredSocket); err != nil || st.Mode().Perm() != 0o666 {
		t.Fatalf("socket mode: %v %v", st, err)
	}
	var nonces []string
	for range 2 {
		tok, err := api.FetchCredential(context.Background(), d.cfg.CredSocket)
		if err != nil {
			t.Fatal(err)
		}
		c, err := api.DecodeCredential(key, tok, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if c.UID != uint32(os.Getuid()) || c.GID != uint32(os.Getgid()) || c.Host != "login1" || c.Expires-c.Issued != 60 {
			t.Fatalf("credential %+v, want uid %d gid %d host login1 valid 60s", c, os.Getuid(), os.Getgid())
		}
		if _, err := api.DecodeCredential([]byte("another key, another cluster!!!!"), tok, time.Now()); err == nil {
			t.Fatal("credential verified under another key")
		}
		nonces = append(nonces, c.Nonce)
	}
	if nonces[0] == nonces[1] {
		t.Fatal("two credentials share a nonce")
	}
	stop()
	if _, err := os.Stat(d.cfg.CredSocket); !os.IsNotExist(err) {
		t.Fatalf("socket left after stop: %v", err)
	}
	if _, err := api.FetchCredential(context.Background(), d.cfg.CredSocket); err == nil || !strings.Contains(err.Error(), api.CredentialSocketEnv) {
		t.Fatalf("fetch from a stopped socket: %v", err)
	}
}
