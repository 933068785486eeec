package noded

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corral-hpc/corral/api"
)

// startCredentials serves Config.CredSocket: a process that connects
// gets one line, a credential for the uid and gid the kernel reports for
// it (SO_PEERCRED), signed with the cluster key (api.Credential), and the
// connection is closed. Nothing is read from the client, so there is
// nothing to parse and nothing a client can claim. stop closes the socket
// and waits for the server.
func (d *Daemon) startCredentials(ctx context.Context) (stop func(), err error) {
	path := d.cfg.CredSocket
	if path == "" {
		return func() {}, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("credential socket: %w", err)
	}
	if st, err := os.Lstat(path); err == nil {
		if st.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("credential socket %s exists and is not a socket", path)
		}
		os.Remove(path) // left by a dead noded
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("credential socket: %w", err)
	}
	if err := os.Chmod(path, 0o666); err != nil { // every local user may ask, for themselves
		ln.Close()
		return nil, fmt.Errorf("credential socket: %w", err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); d.issueCredential(c.(*net.UnixConn)) }()
		}
	}()
	ctx, cancel := context.WithCancel(ctx)
	go func() { <-ctx.Done(); ln.Close() }()
	return func() { cancel(); ln.Close(); wg.Wait(); os.Remove(path) }, nil
}

func (d *Daemon) issueCredential(c *net.UnixConn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	line := func() string {
		raw, err := c.SyscallConn()
		if err != nil {
			return "error: " + err.Error()
		}
		var cred *unix.Ucred
		var credErr error
		if err := raw.Control(func(fd uintptr) {
			cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		}); err != nil || credErr != nil {
			return "error: cannot read the caller's peer credentials"
		}
		cr, err := api.NewCredential(cred.Uid, cred.Gid, nil, d.cfg.Name, time.Now())
		if err != nil {
			return "error: " + err.Error()
		}
		tok, err := cr.Encode(d.cfg.Key)
		if err != nil {
			return "error: " + err.Error()
		}
		return tok
	}()
	c.Write([]byte(line + "\n"))
}
