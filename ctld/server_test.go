package ctld

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStartup(t *testing.T) {
	tc := MustServer(t)
	addr, err := os.ReadFile(filepath.Join(tc.cfg.StateDir, AddrFile))
	if err != nil || strings.TrimSpace(string(addr)) != tc.srv.NodeURL() || !strings.HasPrefix(tc.srv.NodeURL(), "http://127.0.0.1:") {
		t.Fatalf("ctld.addr = %q (%v), NodeURL %s", addr, err, tc.srv.NodeURL())
	}
	// A second controller on the same state fails clearly and leaves the
	// first one's socket alone.
	cfg := tc.cfg
	cfg.Socket = filepath.Join(filepath.Dir(cfg.Socket), "other.sock")
	_, err = New(cfg)
	if err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("second New: %v", err)
	}
	if _, err := os.Stat(tc.cfg.Socket); err != nil {
		t.Fatalf("first controller's socket: %v", err)
	}
	tc.submit(script("still-serving"))

	// Configuration errors name the file and line.
	bad := filepath.Join(t.TempDir(), "corral.conf")
	os.WriteFile(bad, []byte("PartitionName=x Nodes=ALL Bogus=1\n"), 0o644)
	cfg.ConfigFile = bad
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "corral.conf:1: unknown key Bogus") {
		t.Fatalf("bad config: %v", err)
	}
}

func TestStaleSocketIsReplaced(t *testing.T) {
	tc := MustServer(t)
	tc.Stop()
	// A dead controller's socket file does not block the next start...
	l, err := net.Listen("unix", tc.cfg.Socket)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	tc.start()
	tc.submit(script("after-stale"))
	tc.Stop()
	// ...but a regular file at the socket path is not silently deleted.
	if err := os.WriteFile(tc.cfg.Socket, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), "is not a socket") {
		t.Fatalf("New over a regular file: %v", err)
	}
	os.Remove(tc.cfg.Socket)
	tc.start()
	tc.submit(script("ok"))
}
