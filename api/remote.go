package api

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// CtldEnv names the environment variable that makes the CLI reach ctld
// over TCP (from a login node) instead of the local Unix socket.
const CtldEnv = "CORRAL_CTLD"

// NewRemoteClient returns a user-plane client that reaches ctld at
// baseURL (https://host:6817) and proves who the user is with a fresh
// credential from the local noded's socket on every request: ctld accepts
// each credential once. tlsConf pins the cluster CA (see ClientTLS); nil
// is allowed only for an http:// URL.
func NewRemoteClient(baseURL, credSocket string, tlsConf *tls.Config) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("--ctld %q is not an https://host:port URL", baseURL)
	}
	if u.Scheme == "https" && tlsConf == nil {
		return nil, fmt.Errorf("--ctld %s: no CA to check the controller's certificate against (give --ca)", baseURL)
	}
	if credSocket == "" {
		credSocket = ResolveCredentialSocket()
	}
	tr := &http.Transport{TLSClientConfig: tlsConf, MaxIdleConnsPerHost: 16, IdleConnTimeout: time.Minute}
	rt := &credentialTransport{base: u, socket: credSocket, next: tr}
	return &Client{Socket: u.String(), http: &http.Client{Transport: rt}}, nil
}

// NewFailingClient is a client whose every request fails with err: for a
// caller whose client could not be set up and who reports errors per
// request.
func NewFailingClient(where string, err error) *Client {
	return &Client{Socket: where, http: &http.Client{Transport: failingTransport{errors.New(err.Error())}}}
}

type failingTransport struct{ err error }

func (f failingTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }

// ResolveCredentialSocket is $CORRAL_CRED_SOCKET, else this host's
// noded socket (/run/corral/noded-*.sock; any local noded vouches for the
// same uid).
func ResolveCredentialSocket() string {
	if s := os.Getenv(CredentialSocketEnv); s != "" {
		return s
	}
	if m, _ := filepath.Glob(fmt.Sprintf(CredentialSocketPattern, "*")); len(m) > 0 {
		return m[0]
	}
	return fmt.Sprintf(CredentialSocketPattern, "NAME")
}

// credentialTransport points requests built for the Unix socket
// ("http://corral/...") at the remote controller and adds a credential.
type credentialTransport struct {
	base   *url.URL
	socket string
	next   http.RoundTripper
}

func (t *credentialTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	cred, err := FetchCredential(r.Context(), t.socket)
	if err != nil {
		// Flattened: Client.Do would read a wrapped ENOENT as "is
		// corral-ctld running?", but it is the local noded's socket.
		return nil, errors.New(err.Error())
	}
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = t.base.Scheme, t.base.Host, t.base.Host
	r.URL.Path = t.base.Path + r.URL.Path
	r.Header.Set(CredentialHeader, cred)
	return t.next.RoundTrip(r)
}
