package ctld

import (
	"context"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// mustCredential signs a credential for uid with key, issued at when.
func mustCredential(t testing.TB, key []byte, uid uint32, when time.Time) string {
	t.Helper()
	c, err := api.NewCredential(uid, uid, nil, "login1", when)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := c.Encode(key)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// mustCredentialSocket stands in for a noded's credential socket that
// vouches for uid (the real one reads SO_PEERCRED: see noded's tests).
func mustCredentialSocket(t testing.TB, key []byte, uid uint32) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cred")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "c.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close(); os.RemoveAll(dir) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			io.WriteString(c, mustCredential(t, key, uid, time.Now())+"\n")
			c.Close()
		}
	}()
	return path
}

// tcpCall sends a user-plane request to ctld's TCP listener with the
// given credential header ("" for none).
func tcpCall(t testing.TB, tc *testCluster, path, cred string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", tc.srv.NodeURL()+path, nil)
	if cred != "" {
		req.Header.Set(api.CredentialHeader, cred)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestRemoteCredentials: a user on another host reaches the user plane
// over TCP with a credential; a missing, forged, tampered, expired or
// replayed one gets 401 with the reason.
func TestRemoteCredentials(t *testing.T) {
	tc := MustServer(t)
	key := tc.srv.key
	cl, err := api.NewRemoteClient(tc.srv.NodeURL(), mustCredentialSocket(t, key, nobody), nil)
	if err != nil {
		t.Fatal(err)
	}
	var ping pingResponse
	if err := cl.Do(context.Background(), "GET", "/v1/ping", nil, &ping); err != nil || ping.UID != nobody {
		t.Fatalf("remote ping: %+v %v", ping, err)
	}
	id, err := cl.Submit(context.Background(), api.SubmitRequest{Spec: script("remote")})
	if err != nil {
		t.Fatalf("remote submit: %v", err)
	}
	if j := tc.job(id); j.UID != nobody {
		t.Fatalf("remote job owner uid %d, want %d", j.UID, nobody)
	}
	// The remote user is under the same matrix: root's job is not theirs.
	rootJob := tc.submit(script("roots"))
	if _, err := cl.Job(context.Background(), rootJob); err == nil || !strings.Contains(err.Error(), "belongs to root") {
		t.Fatalf("remote nobody reads root's job: %v", err)
	}

	good := mustCredential(t, key, nobody, time.Now())
	payload, sig, _ := strings.Cut(mustCredential(t, key, nobody, time.Now()), ".")
	raw, _ := base64.RawURLEncoding.DecodeString(payload)
	tampered := base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(raw), `"uid":65534`, `"uid":0`, 1))) + "." + sig
	forged := mustCredential(t, []byte("not the cluster key, 32 bytes!!!"), 0, time.Now())
	expired := mustCredential(t, key, nobody, time.Now().Add(-2*api.CredentialTTL))
	if code, body := tcpCall(t, tc, "/v1/ping", good); code != 200 || !strings.Contains(body, `"uid":65534`) {
		t.Fatalf("good credential: %d %s", code, body)
	}
	for _, c := range []struct{ name, cred, want string }{
		{"none", "", "no credential"},
		{"replayed", good, "already used"},
		{"tampered", tampered, "bad signature"},
		{"forged", forged, "bad signature"},
		{"expired", expired, "expired"},
		{"garbage", "x.y.z", "malformed"},
	} {
		if code, body := tcpCall(t, tc, "/v1/ping", c.cred); code != http.StatusUnauthorized || !strings.Contains(body, c.want) {
			t.Errorf("%s credential: %d %s, want 401 %q", c.name, code, body, c.want)
		}
	}
	// The node plane on the same port still needs the cluster key.
	if code, body := tcpCall(t, tc, "/v1/node/register", good); code != http.StatusUnauthorized && code != http.StatusMethodNotAllowed {
		t.Errorf("a user credential on the node plane: %d %s", code, body)
	}
}

func TestNonceCache(t *testing.T) {
	var c nonceCache
	now := time.Unix(1000, 0)
	if fresh, _ := c.use("a", 1060, now); !fresh {
		t.Fatal("first use refused")
	}
	if fresh, _ := c.use("a", 1060, now.Add(time.Second)); fresh {
		t.Fatal("replay accepted")
	}
	if fresh, _ := c.use("b", 1060, now); !fresh {
		t.Fatal("another nonce refused")
	}
	c.use("c", 2000, now.Add(61*time.Second)) // sweeps a and b
	if len(c.seen) != 1 {
		t.Fatalf("expired nonces kept: %v", c.seen)
	}
}
