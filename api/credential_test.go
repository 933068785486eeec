package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

// resign re-signs a credential after tampering with its fields, as only
// a holder of the key could.
func resign(t *testing.T, c Credential) string {
	t.Helper()
	tok, err := c.Encode(testKey)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestDecodeCredential(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	good, err := NewCredential(1000, 100, []uint32{100, 27}, "login1", now)
	if err != nil {
		t.Fatal(err)
	}
	c, err := DecodeCredential(testKey, resign(t, good), now.Add(59*time.Second))
	if err != nil || c.UID != 1000 || c.GID != 100 || c.Host != "login1" || len(c.Nonce) != 32 {
		t.Fatalf("good credential: %+v %v", c, err)
	}
	long := good
	long.Expires = long.Issued + 3600
	future := good
	future.Issued, future.Expires = now.Add(time.Hour).Unix(), now.Add(time.Hour+time.Minute).Unix()
	noNonce := good
	noNonce.Nonce = ""
	payload, _ := json.Marshal(good)
	unsignedRoot := strings.Replace(string(payload), `"uid":1000`, `"uid":0`, 1)
	for _, tt := range []struct {
		name, tok string
		at        time.Time
		want      string
	}{
		{"expired", resign(t, good), now.Add(61 * time.Second), "expired 1s ago"},
		{"too long-lived", resign(t, long), now, "longer than allowed"},
		{"from the future", resign(t, future), now, "issued in the future"},
		{"no nonce", resign(t, noNonce), now, "no nonce"},
		{"tampered", base64.RawURLEncoding.EncodeToString([]byte(unsignedRoot)) + "." + strings.SplitN(resign(t, good), ".", 2)[1], now, "bad signature"},
		{"no dot", "abc", now, "malformed"},
		{"huge", strings.Repeat("a", 5000), now, "too long"},
	} {
		if _, err := DecodeCredential(testKey, tt.tok, tt.at); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	if _, err := DecodeCredential([]byte("another key entirely, 32 bytes.."), resign(t, good), now); err == nil {
		t.Error("verified under another key")
	}
	// An HMAC of the payload made for another purpose (no domain prefix)
	// is not a credential signature.
	m := hmac.New(sha256.New, testKey)
	m.Write(payload)
	enc := base64.RawURLEncoding
	if _, err := DecodeCredential(testKey, enc.EncodeToString(payload)+"."+enc.EncodeToString(m.Sum(nil)), now); err == nil {
		t.Error("credential MAC is not domain-separated")
	}
}

func TestCASignsOnlyWhatItShould(t *testing.T) {
	ca, err := LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !ca.Cert.IsCA || ca.Cert.PublicKeyAlgorithm.String() != "ECDSA" {
		t.Fatalf("CA: IsCA %v, key %v", ca.Cert.IsCA, ca.Cert.PublicKeyAlgorithm)
	}
	cert, err := ca.Issue([]string{"n1.example", "10.0.0.7"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := cert.Leaf.CheckSignatureFrom(ca.Cert); err != nil || cert.Leaf.IsCA {
		t.Fatalf("leaf: %v IsCA %v", err, cert.Leaf.IsCA)
	}
	if len(cert.Leaf.DNSNames) != 1 || len(cert.Leaf.IPAddresses) != 1 {
		t.Fatalf("leaf SANs %v %v", cert.Leaf.DNSNames, cert.Leaf.IPAddresses)
	}
	if _, err := ca.Sign("not a key", []string{"x"}, time.Now()); err == nil {
		t.Error("signed a non-ECDSA key")
	}
	if _, err := ca.Issue(nil, time.Now()); err == nil {
		t.Error("issued a certificate for no host")
	}
}
