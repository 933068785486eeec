package api

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// Remote credentials, in the spirit of MUNGE without a daemon of its own:
// noded on every host answers a local Unix socket with a credential for
// the uid the kernel reports for the connecting process (SO_PEERCRED),
// signed with the cluster key. A CLI on that host sends it to ctld over
// TCP in CredentialHeader; ctld checks the signature and expiry and
// accepts each nonce once. Users never hold the key, so they cannot mint
// a credential for another uid.

// CredentialHeader carries a credential on a user-plane request over TCP.
const CredentialHeader = "X-Corral-Credential"

// CredentialTTL is how long a credential is valid after it is issued.
const CredentialTTL = 60 * time.Second

// CredentialSocketEnv names the environment variable that points the CLI
// at the local noded's credential socket.
const CredentialSocketEnv = "CORRAL_CRED_SOCKET"

// CredentialSocketPattern is where noded offers credentials by default:
// /run/corral/noded-<node name>.sock.
const CredentialSocketPattern = "/run/corral/noded-%s.sock"

// credentialDomain separates credential MACs from node-plane request MACs
// made with the same key.
const credentialDomain = "corral-credential-v1\n"

// Credential says who a user is, as the noded of Host vouches.
type Credential struct {
	UID     uint32   `json:"uid"`
	GID     uint32   `json:"gid"`
	Groups  []uint32 `json:"groups,omitempty"`
	Host    string   `json:"host"`
	Issued  int64    `json:"iat"` // unix seconds
	Expires int64    `json:"exp"` // unix seconds
	Nonce   string   `json:"nonce"`
	// Job is set when noded forwards a request from inside that job
	// (its job socket), for ctld's log; 0 otherwise.
	Job uint64 `json:"job,omitempty"`
}

// NewCredential fills the issue time, expiry and a random nonce.
func NewCredential(uid, gid uint32, groups []uint32, host string, now time.Time) (Credential, error) {
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return Credential{}, err
	}
	return Credential{UID: uid, GID: gid, Groups: groups, Host: host, Issued: now.Unix(),
		Expires: now.Add(CredentialTTL).Unix(), Nonce: hex.EncodeToString(nonce)}, nil
}

func credentialMAC(key, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(credentialDomain))
	m.Write(payload)
	return m.Sum(nil)
}

// Encode signs c with key: base64url(JSON) "." base64url(HMAC).
func (c Credential) Encode(key []byte) (string, error) {
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(credentialMAC(key, payload)), nil
}

// DecodeCredential checks token's signature and validity window at now.
// It does not check replay: the verifier remembers nonces (see ctld).
func DecodeCredential(key []byte, token string, now time.Time) (Credential, error) {
	var c Credential
	if len(token) > 4096 {
		return c, errors.New("credential is too long")
	}
	p, s, ok := strings.Cut(token, ".")
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(p)
	sig, err2 := enc.DecodeString(s)
	if !ok || err1 != nil || err2 != nil {
		return c, errors.New("credential is malformed")
	}
	if !hmac.Equal(sig, credentialMAC(key, payload)) {
		return c, errors.New("credential has a bad signature (not issued with this cluster's key)")
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return c, errors.New("credential is malformed")
	}
	switch {
	case c.Nonce == "" || c.Expires == 0:
		return c, errors.New("credential has no nonce or expiry")
	case c.Expires-c.Issued > int64(CredentialTTL/time.Second):
		return c, errors.New("credential is valid for longer than allowed")
	case now.Unix() > c.Expires:
		return c, fmt.Errorf("credential expired %s ago", now.Sub(time.Unix(c.Expires, 0)).Round(time.Second))
	case time.Unix(c.Issued, 0).After(now.Add(MaxClockSkew)):
		return c, errors.New("credential was issued in the future: check the hosts' clocks")
	}
	return c, nil
}

// FetchCredential asks the local noded's credential socket for one.
func FetchCredential(ctx context.Context, socket string) (string, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return "", fmt.Errorf("getting a credential from the local corral-noded at %s (set %s): %w", socket, CredentialSocketEnv, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	} else {
		conn.SetDeadline(time.Now().Add(10 * time.Second))
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("reading a credential from %s: %w", socket, err)
	}
	line = strings.TrimSpace(line)
	if msg, ok := strings.CutPrefix(line, "error: "); ok {
		return "", fmt.Errorf("corral-noded at %s refused a credential: %s", socket, msg)
	}
	return line, nil
}
