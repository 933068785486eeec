package nodedtest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// FakeCtld is the controller's node plane as noded sees it: it checks
// every signature, records registrations and events, and can be taken
// down (its port closed) and brought back on the same port.
type FakeCtld struct {
	t    testing.TB
	key  []byte
	addr string

	mu  sync.Mutex
	srv *http.Server
	// Registers, Events and BadSignatures are what arrived; read them
	// under Lock (WaitFor's condition already holds it).
	Registers     []api.RegisterRequest
	Events        []api.JobEvent
	BadSignatures int
	kill          []uint64 // returned once in the next register response
	changed       chan struct{}
	// ca is set for a TLS node plane (NewFakeCtldTLS).
	ca     *api.CA
	caFile string
}

func NewFakeCtld(t testing.TB, key []byte) *FakeCtld {
	return start(&FakeCtld{t: t, key: key, changed: make(chan struct{}, 1)})
}

// NewFakeCtldTLS is a FakeCtld whose node plane is TLS under a CA of its
// own (CAFile), which certifies node keys as ctld does (POST
// /v1/node/cert).
func NewFakeCtldTLS(t testing.TB, key []byte) *FakeCtld {
	dir := t.TempDir()
	ca, err := api.LoadOrCreateCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	return start(&FakeCtld{t: t, key: key, changed: make(chan struct{}, 1), ca: ca, caFile: filepath.Join(dir, api.CAFile)})
}

func start(f *FakeCtld) *FakeCtld {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.t.Fatal(err)
	}
	f.addr = ln.Addr().String()
	f.serve(ln)
	f.t.Cleanup(f.Down)
	return f
}

// URL is the node plane's base URL, https for NewFakeCtldTLS.
func (f *FakeCtld) URL() string {
	if f.ca != nil {
		return "https://" + f.addr
	}
	return "http://" + f.addr
}

// CAFile is the CA certificate of a NewFakeCtldTLS.
func (f *FakeCtld) CAFile() string { return f.caFile }

func (f *FakeCtld) serve(ln net.Listener) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/node/register", func(w http.ResponseWriter, r *http.Request) {
		var req api.RegisterRequest
		if !f.verify(w, r, &req) {
			return
		}
		f.mu.Lock()
		f.Registers = append(f.Registers, req)
		kill := f.kill
		f.kill = nil
		f.mu.Unlock()
		f.poke()
		json.NewEncoder(w).Encode(api.RegisterResponse{HeartbeatInterval: 50, Kill: kill})
	})
	mux.HandleFunc("POST /v1/node/events", func(w http.ResponseWriter, r *http.Request) {
		var req api.EventsRequest
		if !f.verify(w, r, &req) {
			return
		}
		f.mu.Lock()
		f.Events = append(f.Events, req.Events...)
		f.mu.Unlock()
		f.poke()
		w.Write([]byte("{}"))
	})
	mux.HandleFunc("POST /v1/node/cert", func(w http.ResponseWriter, r *http.Request) {
		var req api.NodeCertRequest
		if !f.verify(w, r, &req) {
			return
		}
		pub, err := x509.ParsePKIXPublicKey(req.PublicKey)
		var der []byte
		if err == nil && f.ca != nil {
			der, err = f.ca.Sign(pub, req.Hosts, time.Now())
		}
		if err != nil || f.ca == nil {
			http.Error(w, `{"error":"no certificate"}`, http.StatusBadRequest)
			return
		}
		json.NewEncoder(w).Encode(api.NodeCertResponse{Cert: der})
	})
	f.mu.Lock()
	f.srv = &http.Server{Handler: mux}
	srv := f.srv
	f.mu.Unlock()
	if f.ca == nil {
		go srv.Serve(ln)
		return
	}
	cert, err := f.ca.Issue([]string{"127.0.0.1", "localhost"}, time.Now())
	if err != nil {
		f.t.Fatal(err)
	}
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	go srv.ServeTLS(ln, "", "")
}

func (f *FakeCtld) verify(w http.ResponseWriter, r *http.Request, v any) bool {
	body, _ := io.ReadAll(r.Body)
	if err := api.Verify(r, f.key, body, time.Now()); err != nil {
		f.mu.Lock()
		f.BadSignatures++
		f.mu.Unlock()
		http.Error(w, `{"error":"bad signature"}`, http.StatusUnauthorized)
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		f.t.Errorf("fake ctld: bad body %q: %v", body, err)
		http.Error(w, `{"error":"bad body"}`, http.StatusBadRequest)
		return false
	}
	return true
}

// Lock and Unlock guard the recorded requests.
func (f *FakeCtld) Lock()   { f.mu.Lock() }
func (f *FakeCtld) Unlock() { f.mu.Unlock() }

// Started waits for the started event of a job.
func (f *FakeCtld) Started(id uint64) api.JobEvent {
	f.t.Helper()
	return f.waitEvent(id, api.EventStarted, "the start of job "+itoa(id))
}

// waitEvent waits for the first event of kind for job id.
func (f *FakeCtld) waitEvent(id uint64, kind api.JobEventKind, what string) api.JobEvent {
	f.t.Helper()
	var ev api.JobEvent
	f.WaitFor(what, func(f *FakeCtld) bool {
		for _, e := range f.Events {
			if e.JobID == id && e.Kind == kind {
				ev = e
				return true
			}
		}
		return false
	})
	return ev
}

// LastRegister is the latest registration from node ("" for any).
func (f *FakeCtld) LastRegister(node string) (api.RegisterRequest, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.Registers) - 1; i >= 0; i-- {
		if node == "" || f.Registers[i].Name == node {
			return f.Registers[i], true
		}
	}
	return api.RegisterRequest{}, false
}

func (f *FakeCtld) poke() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// Down closes the port: connections are refused, as with a killed ctld.
func (f *FakeCtld) Down() {
	f.mu.Lock()
	srv := f.srv
	f.srv = nil
	f.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// Up listens on the same port again.
func (f *FakeCtld) Up() {
	var ln net.Listener
	var err error
	for i := 0; i < 100; i++ {
		if ln, err = net.Listen("tcp", f.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		f.t.Fatalf("fake ctld cannot listen on %s again: %v", f.addr, err)
	}
	f.serve(ln)
}

func (f *FakeCtld) SetKill(ids ...uint64) {
	f.mu.Lock()
	f.kill = ids
	f.mu.Unlock()
}

// WaitFor blocks until cond (called under the lock) holds.
func (f *FakeCtld) WaitFor(what string, cond func(f *FakeCtld) bool) {
	f.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		f.mu.Lock()
		ok := cond(f)
		f.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-f.changed:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			f.t.Fatalf("fake ctld: timed out waiting for %s", what)
		}
	}
}

// Ended waits for the ended event of a job and returns it.
func (f *FakeCtld) Ended(id uint64) api.JobEvent {
	f.t.Helper()
	return f.waitEvent(id, api.EventEnded, "the end of job "+itoa(id))
}

// StepEnded waits for the first end report of step job.step and returns it.
func (f *FakeCtld) StepEnded(job uint64, step int) api.JobEvent {
	f.t.Helper()
	var ev api.JobEvent
	f.WaitFor("the end of step "+itoa(job)+"."+strconv.Itoa(step), func(f *FakeCtld) bool {
		for _, e := range f.Events {
			if e.JobID == job && e.StepID == step && e.Kind == api.EventStepEnded {
				ev = e
				return true
			}
		}
		return false
	})
	return ev
}

// Kinds lists the event kinds received for a job, in order.
func (f *FakeCtld) Kinds(id uint64) []api.JobEventKind {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.KindsLocked(id)
}

// KindsLocked is Kinds for a caller holding the lock (a WaitFor condition).
func (f *FakeCtld) KindsLocked(id uint64) []api.JobEventKind {
	var out []api.JobEventKind
	for _, e := range f.Events {
		if e.JobID == id {
			out = append(out, e.Kind)
		}
	}
	return out
}

// LastEnded is the latest ended event received for a job (zero if none).
func (f *FakeCtld) LastEnded(id uint64) api.JobEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ev api.JobEvent
	for _, e := range f.Events {
		if e.JobID == id && e.Kind == api.EventEnded {
			ev = e
		}
	}
	return ev
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
