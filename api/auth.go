package api

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// AuthHeader carries "t=<unix seconds>,sig=<hex hmac>" on node-plane calls.
const AuthHeader = "X-Corral-Auth"

// MaxClockSkew bounds how old (or how far ahead) a signed request may be.
const MaxClockSkew = 5 * time.Minute

// KeySize is the length of a cluster key in bytes.
const KeySize = 32

// sign computes the MAC over everything that gives the request its meaning.
func sign(key []byte, method, path string, ts int64, body []byte) string {
	bodySum := sha256.Sum256(body)
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s\n%s\n%d\n%x", method, path, ts, bodySum)
	return hex.EncodeToString(m.Sum(nil))
}

// Sign sets the auth header on r for the given body.
func Sign(r *http.Request, key []byte, body []byte, now time.Time) {
	ts := now.Unix()
	r.Header.Set(AuthHeader, fmt.Sprintf("t=%d,sig=%s", ts, sign(key, r.Method, r.URL.Path, ts, body)))
}

// Verify checks a request's auth header against the key and body.
func Verify(r *http.Request, key []byte, body []byte, now time.Time) error {
	h := r.Header.Get(AuthHeader)
	if h == "" {
		return errors.New("missing " + AuthHeader + " header")
	}
	var ts int64
	var sig string
	for _, part := range strings.Split(h, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return errors.New("malformed auth timestamp")
			}
			ts = n
		case "sig":
			sig = v
		}
	}
	if ts == 0 || sig == "" {
		return errors.New("malformed " + AuthHeader + " header")
	}
	skew := now.Sub(time.Unix(ts, 0))
	if skew > MaxClockSkew || skew < -MaxClockSkew {
		return fmt.Errorf("request time is %s off this host's clock", skew.Round(time.Second))
	}
	want := sign(key, r.Method, r.URL.Path, ts, body)
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return errors.New("bad signature: wrong cluster key")
	}
	return nil
}

// LoadOrCreateKey reads the cluster key at path, creating a random one
// (mode 0600) if the file does not exist.
func LoadOrCreateKey(path string) ([]byte, error) {
	key, err := LoadKey(path)
	if err == nil {
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key = make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	return key, f.Close()
}

// LoadKey reads a hex-encoded cluster key and refuses one that others can read.
func LoadKey(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("cluster key %s has mode %04o; it must be readable by its owner only (chmod 600)", path, st.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || len(key) < 16 {
		return nil, fmt.Errorf("cluster key %s is not a hex key of at least 16 bytes", path)
	}
	return key, nil
}
