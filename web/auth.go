package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"sync"
	"time"
)

// Lifetimes of sign-in state.
const (
	defaultLinkTTL    = time.Minute
	defaultSessionTTL = 12 * time.Hour
	cookieName        = "corral_session"
)

// session is one signed-in browser.
type session struct {
	uid     uint32
	csrf    string // every state-changing request carries it
	expires time.Time
	ended   chan struct{} // closed when the session ends before it expires (signed out)
}

// signIns holds the one-time login links and the sessions they opened.
// Expired entries are dropped as they are met and on every new link.
type signIns struct {
	mu       sync.Mutex
	links    map[string]link
	sessions map[string]*session
	ttl      time.Duration // a session's
	linkTTL  time.Duration // a login link's
}

type link struct {
	uid     uint32
	expires time.Time
}

func newSignIns(ttl, linkTTL time.Duration) *signIns {
	if ttl <= 0 {
		ttl = defaultSessionTTL
	}
	if linkTTL <= 0 {
		linkTTL = defaultLinkTTL
	}
	return &signIns{links: map[string]link{}, sessions: map[string]*session{}, ttl: ttl, linkTTL: linkTTL}
}

// newToken is 256 random bits, URL-safe.
func newToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("web: no randomness: " + err.Error()) // crypto/rand does not fail on Linux
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// newLink is a login link's token for uid, valid until now+linkTTL.
func (s *signIns) newLink(uid uint32, now time.Time) string {
	tok := newToken()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropExpired(now)
	s.links[tok] = link{uid: uid, expires: now.Add(s.linkTTL)}
	return tok
}

// redeem uses a login link once: a new session's token and the session,
// or ok false for an unknown, used or expired link.
func (s *signIns) redeem(tok string, now time.Time) (string, *session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.links[tok]
	delete(s.links, tok) // used once, valid or not
	if !ok || !now.Before(l.expires) {
		return "", nil, false
	}
	return s.openLocked(l.uid, now)
}

// open starts a session for uid without a link (a trusted proxy header).
func (s *signIns) open(uid uint32, now time.Time) (string, *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tok, sess, _ := s.openLocked(uid, now)
	return tok, sess
}

func (s *signIns) openLocked(uid uint32, now time.Time) (string, *session, bool) {
	tok := newToken()
	sess := &session{uid: uid, csrf: newToken(), expires: now.Add(s.ttl), ended: make(chan struct{})}
	s.sessions[tok] = sess
	return tok, sess, true
}

// lookup is the live session of a cookie's token.
func (s *signIns) lookup(tok string, now time.Time) (*session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[tok]
	if ok && !now.Before(sess.expires) {
		s.dropLocked(tok)
		return nil, false
	}
	return sess, ok
}

// end ends one session.
func (s *signIns) end(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(tok)
}

// dropLocked ends a session: what holds on to it (an open terminal) is
// told through its ended channel. The caller holds s.mu.
func (s *signIns) dropLocked(tok string) {
	if sess, ok := s.sessions[tok]; ok {
		delete(s.sessions, tok)
		close(sess.ended)
	}
}

// endAll ends every session and unused link of uid and says how many
// sessions there were.
func (s *signIns) endAll(uid uint32) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for tok, sess := range s.sessions {
		if sess.uid == uid {
			s.dropLocked(tok)
			n++
		}
	}
	for tok, l := range s.links {
		if l.uid == uid {
			delete(s.links, tok)
		}
	}
	return n
}

func (s *signIns) dropExpired(now time.Time) {
	for tok, l := range s.links {
		if !now.Before(l.expires) {
			delete(s.links, tok)
		}
	}
	for tok, sess := range s.sessions {
		if !now.Before(sess.expires) {
			s.dropLocked(tok)
		}
	}
}

// csrfOK compares a request's token with the session's in constant time.
func (sess *session) csrfOK(got string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(sess.csrf)) == 1
}
