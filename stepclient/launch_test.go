package stepclient

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// restartingNode plays a node whose noded restarted: its old address
// refuses connections, its new one takes launches, and the controller
// lists the old address until the new noded registers (after stale
// asks), then the new one.
type restartingNode struct {
	old, now string // node plane URLs
	state    api.NodeState
	refuse   string // the new noded refuses launches with this

	mu       sync.Mutex
	stale    int // asks still answered with the old address
	asks     int
	launches []api.StepLaunch
}

func newRestartingNode(t *testing.T, stale int) (*restartingNode, *api.Client) {
	t.Helper()
	n := &restartingNode{stale: stale, state: api.NodeIdle}
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n.old = "http://" + gone.Addr().String()
	gone.Close() // the old noded is dead: nothing listens there
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.refuse != "" {
			w.WriteHeader(http.StatusForbidden)
			json.NewEncoder(w).Encode(api.Error{Error: n.refuse})
			return
		}
		var l api.StepLaunch
		json.NewDecoder(r.Body).Decode(&l)
		n.mu.Lock()
		n.launches = append(n.launches, l)
		n.mu.Unlock()
		w.Write([]byte("{}"))
	}))
	t.Cleanup(srv.Close)
	n.now = srv.URL

	sock := filepath.Join(t.TempDir(), "ctld.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctld := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/nodes" {
			http.NotFound(w, r)
			return
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		n.asks++
		addr := n.now
		if n.stale > 0 {
			n.stale--
			addr = n.old
		}
		json.NewEncoder(w).Encode([]api.Node{{Name: "other", Addr: "127.0.0.1:1", State: api.NodeIdle},
			{Name: "n1", Addr: strings.TrimPrefix(addr, "http://"), State: n.state, Reason: "Not responding"}})
	})}
	go ctld.Serve(ln)
	t.Cleanup(func() { ctld.Close() })
	return n, api.NewClient(sock)
}

// count is how many times the controller was asked.
func (n *restartingNode) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.asks
}

// quickPauses makes Launch's pauses a millisecond for the test.
func quickPauses(t *testing.T) {
	first, most := launchPauseFirst, launchPauseMax
	launchPauseFirst, launchPauseMax = time.Millisecond, time.Millisecond
	t.Cleanup(func() { launchPauseFirst, launchPauseMax = first, most })
}

func testLaunch() *api.StepLaunch {
	return &api.StepLaunch{Credential: api.StepCredential{JobID: 4, StepID: 1, Tasks: 1}, Argv: []string{"echo", "after"}}
}

// A step granted with the address of a noded that has just been killed
// and restarted (the controller has not heard from the new one yet)
// reaches the new noded: the launch is tried again where the controller
// has the node once it re-registered, and sent there exactly once.
func TestLaunchFollowsARestartedNoded(t *testing.T) {
	quickPauses(t)
	n, cl := newRestartingNode(t, 2)
	if err := Launch(context.Background(), cl, api.StepNode{Node: "n1", Addr: n.old}, "", testLaunch()); err != nil {
		t.Fatalf("launch on a restarted noded: %v", err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.launches) != 1 || n.launches[0].Credential.StepID != 1 || n.launches[0].Argv[1] != "after" {
		t.Errorf("the new noded got launches %+v, want step 1's once", n.launches)
	}
	if n.asks != 3 {
		t.Errorf("the controller was asked %d times, want 3 (twice before the node re-registered)", n.asks)
	}
}

// A noded that answers is not tried again, even with a refusal: the
// launch may have reached it.
func TestLaunchRefusalIsFinal(t *testing.T) {
	quickPauses(t)
	n, cl := newRestartingNode(t, 0)
	n.refuse = "invalid step credential: expired"
	err := Launch(context.Background(), cl, api.StepNode{Node: "n1", Addr: n.now}, "", testLaunch())
	if err == nil || !strings.Contains(err.Error(), "invalid step credential: expired") {
		t.Fatalf("launch refused by the node: %v, want the node's refusal", err)
	}
	if n.count() != 0 {
		t.Errorf("the controller was asked %d times after a node's refusal, want 0", n.asks)
	}
}

// A node that stays unreachable fails the launch once the bound has
// passed, with the connection's error; one the controller has DOWN fails
// it at once, saying so.
func TestLaunchGivesUpOnAnUnreachableNode(t *testing.T) {
	quickPauses(t)
	defer func(d time.Duration) { LaunchRetryFor = d }(LaunchRetryFor)
	LaunchRetryFor = 100 * time.Millisecond

	n, cl := newRestartingNode(t, 1<<30)
	err := Launch(context.Background(), cl, api.StepNode{Node: "n1", Addr: n.old}, "", testLaunch())
	if err == nil || !strings.Contains(err.Error(), "no connection to the node for 100ms") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("launch on a node that never comes back: %v, want no connection for 100ms (connection refused)", err)
	}

	n, cl = newRestartingNode(t, 1<<30)
	n.state = api.NodeDown
	err = Launch(context.Background(), cl, api.StepNode{Node: "n1", Addr: n.old}, "", testLaunch())
	if err == nil || !strings.Contains(err.Error(), "which the controller has DOWN (Not responding)") {
		t.Errorf("launch on a DOWN node: %v, want the controller's DOWN", err)
	}
	if n.count() != 1 {
		t.Errorf("the controller was asked %d times about a DOWN node, want 1", n.asks)
	}
}
