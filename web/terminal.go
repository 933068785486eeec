package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"time"

	"github.com/coder/websocket"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/stepclient"
)

// The browser terminal: xterm.js (static/vendor, from npm through `make
// web-assets`) on a websocket to a shell on a pseudo-terminal inside the
// running session's container: a step the controller creates as the
// signed-in user, as `srun --jobid N --overlap --pty` would, with the
// controller playing srun's part (package stepclient).
//
// The websocket's messages: binary ones from the browser are keystrokes
// and pasted text, text ones a JSON window size ({"rows":R,"cols":C});
// binary ones from the dashboard are the terminal's output. When the
// shell ends the dashboard closes the socket with the reason; when the
// browser leaves, the shell is hung up and its step ended, never the job.

// vendorFiles are what the terminal page loads from static/vendor.
var vendorFiles = []string{"xterm.js", "xterm.css", "addon-fit.js"}

// errNoAssets says how to build a dashboard whose terminal works.
var errNoAssets = errors.New("the terminal's front-end files (xterm.js) were not built into this controller: run make web-assets, then build it again")

// terminalAssets checks that go:embed found the vendored files: a build
// from a clean clone without `make web-assets` compiles, but has none.
func terminalAssets(files fs.FS) error {
	for _, f := range vendorFiles {
		if _, err := fs.Stat(files, "static/vendor/"+f); err != nil {
			return fmt.Errorf("%w (static/vendor/%s is missing)", errNoAssets, f)
		}
	}
	return nil
}

// maxTerminalInput bounds one websocket message from the browser (the
// page sends pasted text in smaller pieces).
const maxTerminalInput = 1 << 20

// terminalView is what the terminal page shows.
type terminalView struct {
	JobID uint64
	Name  string
	Node  string
}

// runningJob is job id if the signed-in user may see it and it runs;
// otherwise it has answered the request and returns nil.
func (d *Dashboard) runningJob(w http.ResponseWriter, r *http.Request, cl *api.Client) *api.Job {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil || id == 0 {
		d.problem(w, http.StatusBadRequest, fmt.Sprintf("%q is not a session's job ID.", r.PathValue("id")))
		return nil
	}
	j, err := cl.Job(r.Context(), id)
	if err != nil {
		d.apiProblem(w, err)
		return nil
	}
	if j.State != api.StateRunning {
		d.problem(w, http.StatusConflict, fmt.Sprintf("Session %d is %s: a terminal opens only in a running session.", id, j.State))
		return nil
	}
	return j
}

// terminalPage is the page that holds the terminal; its script opens the
// websocket. The element id="terminal" carries data-job-id and
// data-status ("connecting", "open", "closed") for tests and people.
func (d *Dashboard) terminalPage(w http.ResponseWriter, r *http.Request, sess *session, _ string) {
	j := d.runningJob(w, r, d.cfg.Controller.As(sess.uid)) // whose it is, before anything about this controller
	if j == nil {
		return
	}
	if err := terminalAssets(static); err != nil {
		d.problem(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	v := terminalView{JobID: j.ID, Name: j.Name}
	if len(j.Nodes) > 0 {
		v.Node = j.Nodes[0]
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	// xterm.js sizes its rows with <style> elements it creates: inline
	// styles, never scripts, are let in on this page.
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
	if err := pages.ExecuteTemplate(w, "terminal.html", v); err != nil {
		d.cfg.Logger.Printf("dashboard: %v", err)
	}
}

// terminalSocket is the terminal's websocket. No CSRF token can ride on
// an upgrade, so the Origin check (browsers always send it on one) and
// the SameSite=Strict session cookie are what keep another site out.
// Every refusal is an HTTP answer before the upgrade, and nothing starts.
func (d *Dashboard) terminalSocket(w http.ResponseWriter, r *http.Request, sess *session, _ string) {
	if o := r.Header.Get("Origin"); o != d.origin {
		d.problem(w, http.StatusForbidden, fmt.Sprintf("Refused: the terminal's connection came from another site (%q), not %s.", o, d.origin))
		return
	}
	cl := d.cfg.Controller.As(sess.uid)
	j := d.runningJob(w, r, cl)
	if j == nil {
		return
	}
	p, err := stepclient.NewPTY(r.Context(), cl, stepclient.PTYRequest{JobID: j.ID, Name: "terminal",
		Argv: shellArgv(j.UID), Env: terminalEnv})
	if err != nil { // the controller's own refusal: another user's job, a job ending
		d.apiProblem(w, err)
		return
	}
	defer p.Close() // the browser left or the shell ended: hang up, end the step
	// The origin is checked above against the dashboard's own, which
	// behind a proxy differs from the Host header websocket.Accept would
	// compare it with.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return // Accept has answered
	}
	defer c.CloseNow()
	c.SetReadLimit(maxTerminalInput)
	ctx := r.Context()
	if err := p.Start(ctx, socketOutput{ctx: ctx, c: c}); err != nil {
		d.cfg.Logger.Printf("dashboard: terminal of job %d: %v", j.ID, err)
		c.Close(websocket.StatusInternalError, closeReason(err.Error()))
		return
	}
	go pingSocket(ctx, c, terminalPing)
	go func() {
		// A terminal lasts no longer than the browser session that opened
		// it: signing out (corral dashboard --logout-all) or its expiry
		// hangs it up.
		expiry := time.NewTimer(sess.expires.Sub(d.cfg.Now()))
		defer expiry.Stop()
		select {
		case <-p.Done():
			c.Close(websocket.StatusNormalClosure, closeReason(endText(p)))
		case <-sess.ended:
			c.Close(websocket.StatusPolicyViolation, "signed out: the terminal is closed")
		case <-expiry.C:
			c.Close(websocket.StatusPolicyViolation, "the sign-in expired: the terminal is closed")
		}
	}()
	for {
		typ, data, err := c.Read(ctx)
		if err != nil {
			return // the browser closed it, or the shell's end did
		}
		switch typ {
		case websocket.MessageBinary:
			_, err = p.Write(data)
		case websocket.MessageText:
			var size struct{ Rows, Cols uint16 }
			if err = json.Unmarshal(data, &size); err == nil {
				err = p.Resize(size.Rows, size.Cols)
			}
		}
		if err != nil {
			c.Close(websocket.StatusPolicyViolation, closeReason(err.Error()))
			return
		}
	}
}

// terminalPing is how often an open terminal's socket is pinged: a
// reverse proxy that drops idle connections (nginx's default is 60 s)
// keeps one that carries pings, and a browser that vanished without
// closing (a laptop's lid shut) is found and its shell hung up.
var terminalPing = 30 * time.Second

// pingSocket pings c every interval until ctx ends; a ping not answered
// within an interval closes c, which ends the terminal's read loop.
func pingSocket(ctx context.Context, c *websocket.Conn, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			pctx, cancel := context.WithTimeout(ctx, every)
			err := c.Ping(pctx)
			cancel()
			if err != nil {
				c.CloseNow()
				return
			}
		}
	}
}

// socketOutput sends the terminal's output to the browser.
type socketOutput struct {
	ctx context.Context
	c   *websocket.Conn
}

func (s socketOutput) Write(b []byte) (int, error) {
	if err := s.c.Write(s.ctx, websocket.MessageBinary, b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// endText says how the shell ended.
func endText(p *stepclient.PTY) string {
	st, err := p.Wait()
	switch {
	case err != nil:
		return err.Error()
	case st.Signal != 0:
		return fmt.Sprintf("the shell was ended by signal %d", st.Signal)
	}
	return fmt.Sprintf("the shell exited with code %d", st.Code)
}

// closeReason fits a websocket close frame (at most 123 bytes).
func closeReason(s string) string {
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}
