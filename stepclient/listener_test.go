package stepclient

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/stepio"
)

// A runner's connection is let in only with a Hello carrying the token;
// it names the node it says it is.
func TestListenerHello(t *testing.T) {
	l, err := Listen("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if host, _, _ := net.SplitHostPort(l.Addr().String()); host != "127.0.0.1" {
		t.Errorf("listening on %s for a node on loopback", l.Addr())
	}
	for _, tc := range []struct {
		first stepio.Frame
		node  string
		err   string
	}{
		{stepio.HelloFrame(l.Token, "n7"), "n7", ""},
		{stepio.HelloFrame("not-the-token", "n7"), "", "wrong token"},
		{stepio.Frame{Kind: stepio.Stdout, Task: 0, Payload: []byte("x")}, "", "not a hello"},
	} {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if err := stepio.NewWriter(c).Write(tc.first); err != nil {
			t.Fatal(err)
		}
		s, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		node, err := l.Hello(s, 10*time.Second)
		switch {
		case tc.err == "" && (err != nil || node != tc.node):
			t.Errorf("hello %q: %q, %v; want node %q", tc.first.Payload, node, err, tc.node)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("first frame %q %q: %v, want an error saying %q", tc.first.Kind, tc.first.Payload, err, tc.err)
		}
		c.Close()
		s.Close()
	}
	if _, err := Listen("not a url"); err == nil {
		t.Error("a node address that is no URL was taken")
	}
}
