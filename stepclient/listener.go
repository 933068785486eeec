package stepclient

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/corral-hpc/corral/stepio"
)

// Listener is the port a step's runners connect back to, and the token
// each must present first.
type Listener struct {
	net.Listener
	// Token is the step's I/O token (api.StepLaunch.IOToken).
	Token string
}

// Listen opens a Listener on the address of this host that the node at
// nodeAddr (the node plane's URL, the step's first node) can reach.
func Listen(nodeAddr string) (*Listener, error) {
	ip, err := LaunchHostIP(nodeAddr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return nil, fmt.Errorf("cannot listen for the step's I/O: %v", err)
	}
	tok := make([]byte, 32)
	rand.Read(tok) // never fails (crypto/rand)
	return &Listener{Listener: ln, Token: hex.EncodeToString(tok)}, nil
}

// Hello reads c's first frame, within timeout, and checks that it is a
// Hello with l's token; it returns the node that says it connected. The
// caller checks that the node is one of the step's and closes c on an
// error.
func (l *Listener) Hello(c net.Conn, timeout time.Duration) (node string, err error) {
	c.SetReadDeadline(time.Now().Add(timeout))
	f, err := stepio.Read(c)
	if err != nil {
		return "", err
	}
	c.SetReadDeadline(time.Time{})
	if f.Kind != stepio.Hello {
		return "", fmt.Errorf("first frame is %q, not a hello", f.Kind)
	}
	tok, node, err := stepio.ParseHello(f.Payload)
	if err != nil {
		return "", err
	}
	if subtle.ConstantTimeCompare([]byte(tok), []byte(l.Token)) != 1 {
		return "", errors.New("wrong token")
	}
	return node, nil
}

// LaunchHostIP is the address of this host that the node at nodeAddr can
// reach: the source address of the route to it (a UDP "connection" sends
// nothing; it only picks the route). A node on loopback gets loopback, a
// node across the network the interface that reaches it.
func LaunchHostIP(nodeAddr string) (string, error) {
	u, err := url.Parse(nodeAddr)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("node address %q is not a URL", nodeAddr)
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	c, err := net.Dial("udp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return "", fmt.Errorf("no route to %s: %v", u.Hostname(), err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String(), nil
}
