package api

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
)

// NewOneShotClient returns a client for the socket at path that makes one
// connection per request, in the calling goroutine: a command that sends
// one or two requests and exits (sbatch, squeue in a pipeline's loop) has
// no use for http.Transport's pool, whose dialing, reading and writing
// goroutines each wake the process while it waits for the controller
// (docs/benchmarks.md, issue 14). Its answers and errors are those of
// NewClient's.
func NewOneShotClient(socket string) *Client {
	return &Client{Socket: socket, http: &http.Client{Transport: oneShot(socket)}}
}

// oneShot is an http.RoundTripper over a fresh Unix-socket connection per
// request, closed with the answer's body.
type oneShot string

func (o oneShot) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", string(o))
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	// A cancelled or expired request closes its connection, which ends a
	// read or write in progress; no goroutine waits for it meanwhile.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	fail := func(err error) (*http.Response, error) {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	req.Close = true
	if err := req.Write(conn); err != nil {
		return fail(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return fail(err)
	}
	resp.Body = &oneShotBody{ReadCloser: resp.Body, ctx: ctx, stop: stop, conn: conn}
	return resp, nil
}

// oneShotBody closes the connection with the body, and reports a read cut
// short by the request's context as the context's error.
type oneShotBody struct {
	io.ReadCloser
	ctx  context.Context
	stop func() bool
	conn net.Conn
	once sync.Once
}

func (b *oneShotBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && b.ctx.Err() != nil {
		err = b.ctx.Err()
	}
	return n, err
}

func (b *oneShotBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() {
		b.stop()
		b.conn.Close()
	})
	return err
}
