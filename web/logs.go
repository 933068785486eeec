package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/corral-hpc/corral/api"
)

// The log page (/jobs/{id}/log): a job's output as `corral log` shows
// it, read from its node through the user plane as the signed-in user,
// so another user's job is refused (403) before anything is read. The
// page shows the last logTail bytes; for a running job its script
// follows /jobs/{id}/log/follow, an event stream that asks for more
// output as `corral log -f` does, until the job ends.

// logTail bounds the output the page shows at first.
const logTail = 64 << 10

// logPoll is how often a followed log asks the node for more, as
// `corral log -f`.
const logPoll = 500 * time.Millisecond

// farOffset is past the end of any output: a read from it answers the
// output's size and no data.
const farOffset = 1 << 62

// logView is what the log page shows.
type logView struct {
	JobID     uint64
	Name      string
	State     string
	Node      string
	Stderr    bool
	Text      string
	Shown     int64 // bytes shown
	Size      int64 // the output's size when read
	Next      int64 // where following resumes
	Done      bool  // the job ended: nothing more will come
	Truncated bool
}

// logRequest reads the job ID and stream of a log request.
func logRequest(r *http.Request) (uint64, bool, error) {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil || id == 0 {
		return 0, false, fmt.Errorf("invalid job id %q: a log is a job's, by its number", r.PathValue("id"))
	}
	return id, r.URL.Query().Get("err") == "1", nil
}

// logPage shows the last logTail bytes of a job's output.
func (d *Dashboard) logPage(w http.ResponseWriter, r *http.Request, sess *session, _ string) {
	id, stderr, err := logRequest(r)
	if err != nil {
		d.problem(w, http.StatusBadRequest, err.Error())
		return
	}
	c := d.cfg.Controller.As(sess.uid)
	v, err := readTail(r.Context(), c, id, stderr)
	if err != nil {
		d.apiProblem(w, err) // another user's job: the controller's 403, and nothing read
		return
	}
	if j, err := c.Job(r.Context(), id); err == nil {
		v.Name, v.State = j.Name, string(j.State)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := pages.ExecuteTemplate(w, "log.html", v); err != nil {
		d.cfg.Logger.Printf("dashboard: %v", err)
	}
}

// readTail reads the last logTail bytes of job id's output: its size
// first, then from there.
func readTail(ctx context.Context, c *api.Client, id uint64, stderr bool) (logView, error) {
	v := logView{JobID: id, Stderr: stderr}
	end, err := c.Log(ctx, id, stderr, farOffset)
	if err != nil {
		return v, err
	}
	v.Node, v.State, v.Done, v.Size = end.Node, string(end.State), end.Done, end.Size
	from := max(0, end.Size-logTail)
	v.Next, v.Truncated = from, from > 0
	if end.Size > 0 {
		chunk, err := c.Log(ctx, id, stderr, from)
		if err != nil {
			return v, err
		}
		data := chunk.Data
		if int64(len(data)) > logTail { // it grew since: keep the newest
			data = data[int64(len(data))-logTail:]
			v.Truncated = true
		}
		v.Text, v.Shown, v.Next, v.Size = string(data), int64(len(data)), chunk.Next, max(chunk.Size, end.Size)
	}
	return v, nil
}

// logFollow streams a job's output from ?offset= as server-sent events:
// "output" with a JSON string of new text, and "done" with the job's
// final state once it has ended and everything was sent.
func (d *Dashboard) logFollow(w http.ResponseWriter, r *http.Request, sess *session, _ string) {
	id, stderr, err := logRequest(r)
	if err != nil {
		d.problem(w, http.StatusBadRequest, err.Error())
		return
	}
	offset, err := strconv.ParseInt(r.URL.Query().Get("offset"), 10, 64)
	if err != nil || offset < 0 {
		d.problem(w, http.StatusBadRequest, "offset: give the byte offset to follow from (0 or more)")
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported here", http.StatusInternalServerError)
		return
	}
	c := d.cfg.Controller.As(sess.uid)
	chunk, err := c.Log(r.Context(), id, stderr, offset) // refused before any header is sent
	if err != nil {
		d.apiProblem(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	var held []byte // a character cut by the chunk's end waits for its rest
	lastSent := time.Now()
	for {
		data := append(held, chunk.Data...)
		cut := len(data)
		if !chunk.Done || chunk.Next < chunk.Size {
			cut = completeRunes(data)
		}
		held = append([]byte(nil), data[cut:]...)
		if cut > 0 {
			text, _ := json.Marshal(string(data[:cut]))
			fmt.Fprintf(w, "event: output\ndata: %s\n\n", text)
			lastSent = time.Now()
		}
		moved := chunk.Next > offset
		offset = chunk.Next
		switch {
		case chunk.Next < chunk.Size && moved: // more is there already
		case chunk.Done:
			fmt.Fprintf(w, "event: done\ndata: %s\n\n", chunk.State)
			fl.Flush()
			return
		default:
			if time.Since(lastSent) >= keepAlive {
				fmt.Fprint(w, ": still here\n\n")
				lastSent = time.Now()
			}
			fl.Flush()
			if !sleep(r.Context(), logPoll) {
				return
			}
		}
		if chunk, err = c.Log(r.Context(), id, stderr, offset); err != nil {
			fmt.Fprintf(w, "event: failed\ndata: %s\n\n", mustJSON(refusal(err)))
			fl.Flush()
			return
		}
	}
}

// completeRunes is the length of b's prefix that does not end inside a
// UTF-8 character.
func completeRunes(b []byte) int {
	for back := 1; back <= utf8.UTFMax && back <= len(b); back++ {
		c := b[len(b)-back]
		if c < utf8.RuneSelf {
			return len(b) // ASCII ends it
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[len(b)-back:]) {
				return len(b)
			}
			return len(b) - back
		}
	}
	return len(b)
}

func mustJSON(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
