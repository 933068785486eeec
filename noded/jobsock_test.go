package noded

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/noded/shim"
)

// seenCtld is a controller that records the credentials forwarded to it.
type seenCtld struct {
	mu    sync.Mutex
	creds []api.Credential
	paths []string
}

func (s *seenCtld) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cr, err := api.DecodeCredential(testKey, r.Header.Get(api.CredentialHeader), time.Now())
	if err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	s.mu.Lock()
	s.creds = append(s.creds, cr)
	s.paths = append(s.paths, r.URL.Path)
	s.mu.Unlock()
	json.NewEncoder(w).Encode(map[string]any{"uid": cr.UID})
}

func (s *seenCtld) seen() ([]api.Credential, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]api.Credential(nil), s.creds...), append([]string(nil), s.paths...)
}

// testJobCgroup makes a cgroup for a pretend job below the test's own and
// returns its placement and the cgroup.procs file that moves a process
// into it.
func testJobCgroup(t *testing.T, h *cgroup.Host) (cgroup.Placement, string) {
	name := fmt.Sprintf("corral-jobsocktest-%d", os.Getpid())
	var dir, key string
	switch h.Mode {
	case cgroup.ModeV2:
		dir, key = filepath.Join(h.UnifiedOwn, name), ""
	default:
		hi, ok := h.Controller("memory")
		if !ok {
			t.Skip("needs the v1 memory controller mounted")
		}
		dir, key = filepath.Join(hi.Own, name), "memory"
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("making a job cgroup: %v", err)
	}
	t.Cleanup(func() {
		containertest.Eventually(5*time.Second, func() bool { return os.Remove(dir) == nil })
	})
	return cgroup.Placement{Dirs: map[string]string{key: dir}}, filepath.Join(dir, "cgroup.procs")
}

// serveTestJobSocket serves the socket of job 7 of nobody, whose cgroup
// is a fresh one, forwarding to a recording controller.
func serveTestJobSocket(t *testing.T) (ctld *seenCtld, sock, procs string) {
	containertest.MustRoot(t)
	h, err := cgroup.Detect()
	if err != nil {
		t.Skipf("needs cgroups: %v", err)
	}
	ctld = &seenCtld{}
	srv := httptest.NewServer(ctld)
	t.Cleanup(srv.Close)
	d := &Daemon{cfg: Config{CtldURL: srv.URL, Name: "n1", Key: testKey}, log: log.New(os.Stderr, "", 0), cg: h}
	place, procs := testJobCgroup(t, h)
	jobDir := filepath.Join(containertest.MustUserDir(t, 0, 0), "7")
	if err := os.Mkdir(jobDir, 0o711); err != nil {
		t.Fatal(err)
	}
	l := &api.LaunchRequest{JobID: 7, UID: containertest.Nobody, GID: containertest.Nobody}
	s, err := d.openJobSocket(jobDir, place, l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return ctld, filepath.Join(jobDir, shim.CtlDir, jobSocketFile), procs
}

// TestJobSocketPeers: only a process of the job's user inside the job's
// cgroup reaches ctld through the job's socket, and then as the job's
// user with the job's ID, whatever credential it sent itself; a process
// of the same user outside the job, root outside the job and a request
// for the node plane are refused and forward nothing.
func TestJobSocketPeers(t *testing.T) {
	ctld, sock, procs := serveTestJobSocket(t)

	// curl as uid, moved into the job's cgroup first when inJob.
	curl := func(uid int, inJob bool, path string) (string, string) {
		move := ""
		if inJob {
			move = "echo $$ > " + procs + " && "
		}
		script := move + fmt.Sprintf("exec setpriv --reuid %d --regid %d --clear-groups curl -sS -H '%s: forged' -w '\\n%%{http_code}' --unix-socket %s http://corral%s",
			uid, uid, api.CredentialHeader, sock, path)
		out, _ := exec.Command("sh", "-c", script).CombinedOutput()
		text := strings.TrimSpace(string(out))
		i := strings.LastIndexByte(text, '\n')
		return text[i+1:], text[:max(i, 0)]
	}

	if code, body := curl(containertest.Nobody, false, "/v1/jobs"); code != "403" || !strings.Contains(body, "not in its cgroup") {
		t.Errorf("the job's user outside the job: %s %s, want 403 (not in its cgroup)", code, body)
	}
	if code, body := curl(0, false, "/v1/jobs"); code != "403" {
		t.Errorf("root outside the job: %s %s, want 403", code, body)
	}
	if creds, _ := ctld.seen(); len(creds) != 0 {
		t.Fatalf("refused callers reached ctld: %+v", creds)
	}
	if code, body := curl(containertest.Nobody, true, "/v1/node/register"); code != "403" {
		t.Errorf("the node plane from inside the job: %s %s, want 403", code, body)
	}
	if code, body := curl(containertest.Nobody, true, "/v1/jobs"); code != "200" {
		t.Fatalf("the job's user inside the job: %s %s, want 200", code, body)
	}
	if code, body := curl(0, true, "/v1/partitions"); code != "200" {
		t.Fatalf("root inside the job: %s %s, want 200", code, body)
	}
	creds, paths := ctld.seen()
	if len(creds) != 2 || paths[0] != "/v1/jobs" || paths[1] != "/v1/partitions" {
		t.Fatalf("ctld saw %v, want /v1/jobs then /v1/partitions", paths)
	}
	for _, cr := range creds {
		if cr.UID != containertest.Nobody || cr.GID != containertest.Nobody || cr.Job != 7 || cr.Host != "n1" {
			t.Errorf("forwarded as %+v, want the job's user (uid %d) from job 7 on n1", cr, containertest.Nobody)
		}
	}
}

// TestJobSocketConnectionBound: a job holding maxJobConns connections
// open gets 503 on one more, whoever it is; once one closes, the next
// connection is judged on its peer again.
func TestJobSocketConnectionBound(t *testing.T) {
	_, sock, _ := serveTestJobSocket(t)
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range maxJobConns {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	status := func() int {
		cl := &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "unix", sock)
			}}}
		resp, err := cl.Get("http://corral/v1/jobs")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := status(); code != http.StatusServiceUnavailable {
		t.Fatalf("connection %d: %d, want 503", maxJobConns+1, code)
	}
	held[0].Close()
	held = held[1:]
	// The server sees the close when it reads; the test process is not in
	// the job, so a judged connection is refused with 403.
	if !containertest.Eventually(10*time.Second, func() bool { return status() == http.StatusForbidden }) {
		t.Fatal("a connection after one closed is still refused as over the bound")
	}
}
