package noded

import (
	"net"
	"os"
	"testing"
)

// A listener of this process is found on its port and held by this
// process, not by another (pid 1); a port nobody listens on has no
// sockets. This is what keeps a tunnel from reaching a listener outside
// the job that published the port.
func TestListenerOwnership(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	inodes, err := listeningInodes("/proc/net", port)
	if err != nil || len(inodes) != 1 {
		t.Fatalf("listening sockets on port %d: %v, %v; want one", port, inodes, err)
	}
	heldBy("/proc", 1, inodes)
	for ino, held := range inodes {
		if held {
			t.Fatalf("socket %s is said to be held by pid 1", ino)
		}
	}
	heldBy("/proc", os.Getpid(), inodes)
	for ino, held := range inodes {
		if !held {
			t.Fatalf("socket %s is not found among this process's descriptors", ino)
		}
	}
	ln.Close()
	if inodes, err := listeningInodes("/proc/net", port); err != nil || len(inodes) != 0 {
		t.Fatalf("after closing: %v, %v; want none", inodes, err)
	}
}
