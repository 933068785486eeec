package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld"
)

func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ctldcmd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestBadInvocations(t *testing.T) {
	dir := shortTempDir(t)
	badConf := filepath.Join(dir, "bad.conf")
	os.WriteFile(badConf, []byte("PartitionName=a Nodes=ALL\nPartitionName=b Nodes=ALL Colour=red\n"), 0o644)
	base := []string{"corral-ctld", "--state", filepath.Join(dir, "state"), "--socket", filepath.Join(dir, "s.sock"), "--listen", "127.0.0.1:0"}
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--heartbeat", "20s"}, "--heartbeat 20s must be shorter than --node-timeout 10s"},
		{[]string{"--node-timeout", "0s"}, "must be positive"},
		{[]string{"--config", badConf}, "bad.conf:2: unknown key Colour"},
		{[]string{"--config", filepath.Join(dir, "missing.conf")}, "no such file"},
		{[]string{"--listen", "256.0.0.1:1"}, "node plane"},
	}
	for _, tt := range tests {
		err := newApp(io.Discard).Run(append(append([]string{}, base...), tt.args...))
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error = %v, want one line containing %q", tt.args, err, tt.wantErr)
		}
	}
}

func TestRunsUntilSIGTERM(t *testing.T) {
	dir := shortTempDir(t)
	state, sock := filepath.Join(dir, "state"), filepath.Join(dir, "s.sock")
	done := make(chan error, 1)
	go func() {
		done <- newApp(io.Discard).Run([]string{"corral-ctld", "--state", state, "--socket", sock,
			"--listen", "127.0.0.1:0", "--heartbeat", "200ms", "--node-timeout", "2s"})
	}()
	client := api.NewClient(sock)
	deadline := time.Now().Add(10 * time.Second)
	for client.Do(context.Background(), "GET", "/v1/ping", nil, nil) != nil {
		if time.Now().After(deadline) {
			t.Fatal("controller did not come up")
		}
		time.Sleep(5 * time.Millisecond)
	}
	addr, err := os.ReadFile(filepath.Join(state, ctld.AddrFile))
	if err != nil || !strings.HasPrefix(string(addr), "https://127.0.0.1:") { // always TLS (docs/security.md)
		t.Fatalf("ctld.addr = %q, %v", addr, err)
	}
	if st, err := os.Stat(filepath.Join(state, ctld.KeyFile)); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("cluster key: %v %v", st, err)
	}
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("controller ignored SIGTERM")
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
}
