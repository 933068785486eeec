package ctld

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// sseEvents reads a server-sent event stream: each event's name and data.
func sseEvents(t *testing.T, b *browser, path string) (<-chan [2]string, func()) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.base+path, nil)
	resp, err := b.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		resp.Body.Close()
		t.Fatalf("%s: %d %s, want an event stream", path, resp.StatusCode, ct)
	}
	events := make(chan [2]string, 100)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		var name string
		for sc.Scan() {
			line := sc.Text()
			if n, ok := strings.CutPrefix(line, "event: "); ok {
				name = n
			} else if d, ok := strings.CutPrefix(line, "data: "); ok {
				events <- [2]string{name, d}
			}
		}
	}()
	return events, func() { resp.Body.Close() }
}

func nextEvent(t *testing.T, events <-chan [2]string, what string) [2]string {
	t.Helper()
	select {
	case ev, ok := <-events:
		if !ok {
			t.Fatalf("the stream ended before %s", what)
		}
		return ev
	case <-time.After(30 * time.Second): // a bound on the wait, not a timing claim
		t.Fatalf("no event within 30 s: %s", what)
	}
	return [2]string{}
}

// The log page shows the last 64 KiB of a running job's output with the
// hook id="log" data-job-id, its follow stream sends what the job writes
// next and "done" once the job has ended; another user gets 403 from
// both and sees none of the output; each session row links its log.
func TestDashboardLogs(t *testing.T) {
	tc := MustServer(t, withPartitions(matrixConf), func(c *Config) { c.WebListen = "127.0.0.1:0" })
	base := "http://" + tc.srv.web.Addr()
	node := newFakeNode(tc, "n1", 4, 8<<30)
	node.register()
	id := tc.submitFor(uidOwner, script("talker"))
	node.waitLaunch()
	tc.waitJob(id, "running", inState(api.StateRunning))
	first := strings.Repeat("x", 100<<10) + "\nsecret line of the owner\n"
	node.set(func(f *fakeNode) { f.output = map[uint64]string{id: first} })
	ref := strconv.FormatUint(id, 10)

	owner := newBrowser(t, base)
	signIn(t, tc, owner, uidOwner)
	if _, page := owner.get("/"); !strings.Contains(page, `href="/jobs/`+ref+`/log"`) {
		t.Errorf("the sessions page has no log action for job %d", id)
	}
	code, page := owner.get("/jobs/" + ref + "/log")
	if code != 200 || !strings.Contains(page, `id="log" data-job-id="`+ref+`" data-offset="`+strconv.Itoa(len(first))+`" data-done="false"`) ||
		!strings.Contains(page, "secret line of the owner") || !strings.Contains(page, "the last 65536 bytes of "+strconv.Itoa(len(first))) {
		t.Fatalf("the owner's log page (%d) lacks the hook, the tail or its size:\n%.600s", code, page)
	}
	if strings.Count(page, "x") > 64<<10+200 {
		t.Errorf("the log page shows more than the last 64 KiB")
	}

	other := newBrowser(t, base)
	signIn(t, tc, other, nobody)
	for _, path := range []string{"/jobs/" + ref + "/log", "/jobs/" + ref + "/log/follow?offset=0", "/jobs/" + ref + "/log?err=1"} {
		if code, out := other.get(path); code != http.StatusForbidden || strings.Contains(out, "secret") {
			t.Errorf("another user's %s: %d, want 403 and nothing of the output:\n%.300s", path, code, out)
		}
	}

	events, stop := sseEvents(t, owner, "/jobs/"+ref+"/log/follow?offset="+strconv.Itoa(len(first)))
	defer stop()
	node.set(func(f *fakeNode) { f.output[id] = first + "epoch 1 — loss 0.5\n" })
	ev := nextEvent(t, events, "the new output")
	var text string
	if ev[0] != "output" || json.Unmarshal([]byte(ev[1]), &text) != nil || text != "epoch 1 — loss 0.5\n" {
		t.Fatalf("the follow stream sent %q %s, want the new line", ev[0], ev[1])
	}
	if err := node.end(id, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, events, "the job's end"); ev != [2]string{"done", "COMPLETED"} {
		t.Fatalf("after the job ended the stream sent %v, want done COMPLETED", ev)
	}
	if _, page := owner.get("/jobs/" + ref + "/log"); !strings.Contains(page, `data-done="true"`) || !strings.Contains(page, "epoch 1") {
		t.Errorf("the finished job's log page is not final or lacks its output:\n%.400s", page)
	}
	if code, _ := owner.get("/jobs/nine/log"); code != http.StatusBadRequest {
		t.Errorf("a log of job \"nine\": %d, want 400", code)
	}
	if code, _ := owner.get("/jobs/999999/log"); code != http.StatusNotFound {
		t.Errorf("the log of a job that does not exist: %d, want 404", code)
	}
}
