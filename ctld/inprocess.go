package ctld

import (
	"io"
	"net/http"
	"sync"

	"github.com/corral-hpc/corral/api"
)

// The user plane served in process: the dashboard acts for the user its
// browser session names through a client whose requests go straight to
// the user-plane handler, with that user as the caller. They pass the same
// gate (rate limit, role, bounds) and the same ownership checks as a
// request on the socket; only where the identity comes from differs.

// clientAs is a client of user-plane handler h acting as uid (users
// resolves its primary group).
func clientAs(h http.Handler, users *accounts, uid uint32) *api.Client {
	p := peer{UID: uid}
	if a, err := users.get(uid); err == nil {
		p.GID = a.GID
	}
	return api.NewClientTransport("the controller (in process)", inProcess{h: h, peer: p})
}

// inProcess is an http.RoundTripper that serves each request with h as
// peer. The answer streams: h runs in its own goroutine and writes into a
// pipe the response body reads, so long polls and log follows work as on
// the socket.
type inProcess struct {
	h    http.Handler
	peer peer
}

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, body: pw, ready: make(chan struct{})}
	req = req.WithContext(withPeer(req.Context(), t.peer))
	go func() {
		defer func() {
			w.WriteHeader(http.StatusOK) // a handler that wrote nothing answered 200
			pw.Close()
		}()
		t.h.ServeHTTP(w, req)
	}()
	select {
	case <-w.ready:
	case <-req.Context().Done():
		pr.CloseWithError(req.Context().Err())
		return nil, req.Context().Err()
	}
	return &http.Response{Status: http.StatusText(w.code), StatusCode: w.code, Proto: "HTTP/1.1", ProtoMajor: 1,
		ProtoMinor: 1, Header: w.header, Body: pr, ContentLength: -1, Request: req}, nil
}

// pipeWriter is the handler's side of an in-process answer.
type pipeWriter struct {
	header http.Header
	body   *io.PipeWriter
	once   sync.Once
	code   int
	ready  chan struct{} // closed once the status and header are set
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(code int) {
	w.once.Do(func() {
		w.code = code
		w.header = w.header.Clone() // later changes are not the answer's
		close(w.ready)
	})
}

func (w *pipeWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// Flush is there for handlers that flush as they stream; the pipe has no
// buffer to flush.
func (w *pipeWriter) Flush() { w.WriteHeader(http.StatusOK) }
