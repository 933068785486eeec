package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/corral-hpc/corral/api"
)

// The dashboard's terminal is a shell inside the session's container
// (seed 002): it sees the session's memory limit under /sys/fs/cgroup,
// follows the browser's window size, and closing it ends its step while
// the session runs on.
func TestDashboardTerminalInTheContainer(t *testing.T) {
	web := "127.0.0.1:" + strconv.Itoa(freePort(t))
	c := StartCluster(t, ClusterOpts{CtldArgs: []string{"--web", web}})
	base := "http://" + c.WebAddr()
	c.endJobsAtCleanup()
	id := c.Submit(jobDir(t), "-J", "sess", "-c", "1", "--mem", "256M", "-o", "/dev/null", "--wrap", "sleep 3000")
	c.WaitState(id, api.StateRunning, 60*time.Second)

	r := c.Corral("dashboard")
	link := strings.TrimSpace(r.Stdout)
	if r.Code != 0 || !strings.HasPrefix(link, base+"/login?token=") {
		t.Fatalf("corral dashboard: exit %d: %q %s", r.Code, r.Stdout, r.Stderr)
	}
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	resp, err := hc.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("signing in: %d", resp.StatusCode)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	u := fmt.Sprintf("ws://%s/jobs/%d/terminal/ws", c.WebAddr(), id)
	if _, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: hc, HTTPHeader: http.Header{"Origin": {"http://elsewhere.example"}}}); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a cross-origin terminal: %v, want 403", err)
	}
	ws, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: hc, HTTPHeader: http.Header{"Origin": {base}}})
	if err != nil {
		t.Fatalf("the terminal: %v\nctld:\n%s", err, c.Logs("ctld"))
	}
	defer ws.CloseNow()
	var screen strings.Builder
	expect := func(re *regexp.Regexp, what string) {
		t.Helper()
		for !re.MatchString(screen.String()) {
			_, data, err := ws.Read(ctx)
			if err != nil {
				t.Fatalf("%s: the terminal shows %q, then %v\nctld:\n%s\nnoded:\n%s", what, screen.String(), err, c.Logs("ctld"), c.Logs("noded-n1"))
			}
			screen.Write(data)
		}
	}
	send := func(line string) {
		t.Helper()
		screen.Reset()
		if err := ws.Write(ctx, websocket.MessageBinary, []byte(line+"\r")); err != nil {
			t.Fatal(err)
		}
	}
	send("cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null; echo \"job=$SLURM_JOB_ID\"")
	expect(regexp.MustCompile(`[\r\n]268435456\r?\n`), "the session's --mem 256M as its limit")
	expect(regexp.MustCompile(`job=`+strconv.FormatUint(id, 10)), "the job's variables")
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"rows":41,"cols":103}`)); err != nil {
		t.Fatal(err)
	}
	send("stty size")
	expect(regexp.MustCompile(`[\r\n]41 103\r?\n`), "the browser's window size")

	steps, err := c.Client.Steps(context.Background(), id)
	if err != nil || len(steps) != 1 || steps[0].Name != "terminal" || steps[0].State != api.StateRunning {
		t.Fatalf("the job's steps with the terminal open: %+v %v", steps, err)
	}
	ws.Close(websocket.StatusNormalClosure, "tab closed")
	waitTerminalClosed(t, c, id, "the socket closed")
}
