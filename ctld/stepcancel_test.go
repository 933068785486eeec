package ctld

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// fakeStepNode is a node plane that records step cancels and lists the
// steps it runs.
type fakeStepNode struct {
	mu        sync.Mutex
	cancels   []api.StepCancelRequest
	running   []api.NodeStep
	failCalls bool // answer every request 500
}

// set changes the node under its lock.
func (f *fakeStepNode) set(change func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change()
}

func (f *fakeStepNode) serve(t *testing.T) *api.NodeClient {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.failCalls {
			http.Error(w, `{"error":"broken"}`, http.StatusInternalServerError)
			return
		}
		switch {
		case r.Method == http.MethodPost && r.URL.Path == stepCancelPath:
			var req api.StepCancelRequest
			_ = json.NewDecoder(r.Body).Decode(&req)
			f.cancels = append(f.cancels, req)
			_, _ = w.Write([]byte("{}"))
		case r.Method == http.MethodGet && r.URL.Path == nodeStepsPath:
			_ = json.NewEncoder(w).Encode(f.running)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return api.NewNodeClient(srv.URL, []byte("key"), 5*time.Second)
}

// refusingClient is a client of an address where nothing listens: its
// connections are refused, as a restarting noded's old address refuses
// them.
func refusingClient(t *testing.T) *api.NodeClient {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return api.NewNodeClient("http://"+addr, []byte("key"), 5*time.Second)
}

// ctld's cancel of a step reaches a noded that restarted on a new
// address: a connection refused at the old one is tried again at the
// address the registry has by then (as srun's launch retries,
// stepclient.Launch). A node that answers, even with an error, is not
// tried again, nor one the controller has down.
func TestStepCancelRetriesARestartingNode(t *testing.T) {
	defer func(d time.Duration) { stepCancelPauseFirst = d }(stepCancelPauseFirst)
	stepCancelPauseFirst = time.Millisecond

	node := &fakeStepNode{running: []api.NodeStep{{JobID: 7, StepID: 1}}}
	moved := node.serve(t)
	asked := 0
	o := stepCancelOrder{jobID: 7, stepID: 1, node: "n1", client: refusingClient(t),
		current: func(name string) *api.NodeClient {
			if name != "n1" {
				t.Errorf("asked for node %q", name)
			}
			asked++
			if asked < 3 { // not registered again yet: the old address
				return refusingClient(t)
			}
			return moved
		}}
	ev, err := o.deliver(context.Background())
	if err != nil || ev != nil {
		t.Fatalf("cancel to a restarted node: %v, %+v; want it delivered, the step running there", err, ev)
	}
	var cancels []api.StepCancelRequest
	node.set(func() { cancels = node.cancels })
	if len(cancels) != 1 || cancels[0] != (api.StepCancelRequest{JobID: 7, StepID: 1}) || asked != 3 {
		t.Fatalf("the node got %+v after %d looks at the registry, want one cancel of 7.1 after 3", cancels, asked)
	}

	// The node comes back without the step (srun never launched it there):
	// its part ends with the order.
	node.set(func() { node.running = nil })
	o.client = refusingClient(t)
	asked = 2
	if ev, err := o.deliver(context.Background()); err != nil || ev == nil || ev.Kind != api.EventStepEnded || ev.Node != "n1" {
		t.Fatalf("cancel of a step the node does not run: %v, %+v; want its part's end", err, ev)
	}

	// The controller has the node down meanwhile: no more tries.
	o.client = refusingClient(t)
	o.current = func(string) *api.NodeClient { return nil }
	if _, err := o.deliver(context.Background()); err == nil || !strings.Contains(err.Error(), "down") {
		t.Fatalf("cancel to a node gone down: %v, want an error saying so", err)
	}

	// A node that answers with an error is not asked again.
	node.set(func() { node.failCalls = true })
	o.client = moved
	o.current = func(string) *api.NodeClient { t.Error("a node that answered was looked up again"); return nil }
	if _, err := o.deliver(context.Background()); err == nil || api.NotConnected(err) {
		t.Fatalf("cancel answered 500: %v, want that error", err)
	}
}
