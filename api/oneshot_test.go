package api

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// oneShotServer serves a few answers on a Unix socket in a temporary
// directory, recording each request's body.
func oneShotServer(t *testing.T) (socket string, bodies chan string) {
	t.Helper()
	socket = filepath.Join(t.TempDir(), "ctld.sock")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	bodies = make(chan string, 16)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- r.Header.Get("Content-Type") + " " + string(b)
		if strings.Contains(string(b), `"bad"`) {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":"bad spec","kind":"invalid"}`)
			return
		}
		io.WriteString(w, `{"job_id":42}`)
	})
	mux.HandleFunc("GET /plain", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not json", http.StatusTeapot)
	})
	mux.HandleFunc("GET /big", func(w http.ResponseWriter, r *http.Request) {
		// No Content-Length: a chunked answer, read to its end.
		for i := range 2000 {
			if i == 0 {
				io.WriteString(w, "[")
			} else {
				io.WriteString(w, ",")
			}
			io.WriteString(w, `{"id":7}`)
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, "]")
	})
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return socket, bodies
}

// The one-connection client sends what NewClient's sends and reports
// answers, refusals, an unreachable socket and an expired request in
// the same words, so the Slurm names that use it say what they said.
func TestOneShotClientAnswersAsNewClient(t *testing.T) {
	socket, bodies := oneShotServer(t)
	type outcome struct{ body, answer, err string }
	run := func(newClient func(string) *Client) []outcome {
		c := newClient(socket)
		var out []outcome
		errText := func(err error) string {
			if err == nil {
				return ""
			}
			var se *StatusError
			if errors.As(err, &se) {
				return se.Error() + " " + string(se.Kind) + " " + http.StatusText(se.Code)
			}
			return err.Error()
		}
		id, err := c.Submit(context.Background(), SubmitRequest{Spec: JobSpec{Name: "ok", Script: "#!/bin/sh\ntrue\n"}})
		out = append(out, outcome{<-bodies, strings.Repeat("x", int(id)), errText(err)})
		_, err = c.Submit(context.Background(), SubmitRequest{Spec: JobSpec{Name: "bad"}})
		out = append(out, outcome{<-bodies, "", errText(err)})
		out = append(out, outcome{"", "", errText(c.Do(context.Background(), http.MethodGet, "/plain", nil, nil))})
		var big []struct{ ID int }
		err = c.Do(context.Background(), http.MethodGet, "/big", nil, &big)
		out = append(out, outcome{"", strings.Repeat("x", len(big)), errText(err)})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		out = append(out, outcome{"", "", errText(c.Do(ctx, http.MethodGet, "/slow", nil, nil))})
		gone := newClient(socket + ".gone")
		out = append(out, outcome{"", "", errText(gone.Do(context.Background(), http.MethodGet, "/plain", nil, nil))})
		return out
	}
	want := run(NewClient)
	got := run(NewOneShotClient)
	if len(want[0].answer) != 42 || len(want[3].answer) != 2000 || want[4].err == "" || want[5].err == "" {
		t.Fatalf("the pooled client's outcomes are not what the server serves: %+v", want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d: one-shot %+v, pooled %+v", i, got[i], want[i])
		}
	}
}
