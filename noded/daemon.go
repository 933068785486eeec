package noded

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/noded/eventq"
	"github.com/corral-hpc/corral/noded/shim"
)

// DefaultHeartbeat is used until ctld names an interval.
const DefaultHeartbeat = time.Second

// Daemon is one running corral-noded.
type Daemon struct {
	cfg Config
	log *log.Logger
	cg  *cgroup.Host
	// cgScope names this daemon's cgroups: the node name plus a hash of
	// its state directory, so two daemons that share a name on one host
	// (test clusters, a misconfiguration) never share a job's cgroup.
	cgScope string
	q       *eventq.Queue
	ctld    *api.NodeClient
	tls     *nodeTLS // nil when ctld's URL is http (tls.go)
	// ctldTLS pins the cluster CA for calls to an https ctld (nil: http).
	ctldTLS *tls.Config
	bootID  string
	ln      net.Listener
	addr    string // advertised host:port

	jobsDir, runcRoot string

	mu   sync.Mutex
	jobs map[uint64]*job
	// spare is a shim started ahead of the next launch (spareshim.go);
	// spareStopped once Run has returned.
	spare        *spareShim
	spareStopped bool
	// leaving holds jobs whose end is reported but whose directory is
	// still there (the shim deletes scratch files); closed once it is gone.
	leaving map[uint64]chan struct{}
	// ended are the last runs that ended here, so that a repeated launch
	// of one is not run again.
	ended endedRuns
	cpus  *cpuSlots
	gpus  *gpuNode // nil without GPUs (gpus.go)

	heartbeatMs atomic.Int64
	registered  chan struct{} // closed after the first successful register
	regOnce     sync.Once
	// loops counts the heartbeat and event sender, which Run waits for;
	// supervisors counts the per-job goroutines, which it does not: a
	// stopping noded leaves its jobs running under their shims.
	loops, supervisors sync.WaitGroup
}

// New validates cfg, prepares the state directory and cgroups, recovers
// what an earlier run left, and listens. Nothing is served until Run.
func New(cfg Config, logger *log.Logger) (*Daemon, error) {
	if logger == nil {
		logger = log.New(os.Stderr, "", log.LstdFlags)
	}
	if err := cfg.Normalize(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	// libcontainer rejects a rootfs path with symlinks in it.
	state, err := filepath.EvalSymlinks(cfg.StateDir)
	if err != nil {
		return nil, err
	}
	cfg.StateDir = state
	d := &Daemon{
		cfg:        cfg,
		log:        logger,
		ctld:       api.NewNodeClient(cfg.CtldURL, cfg.Key, 10*time.Second),
		bootID:     randomID(),
		jobsDir:    filepath.Join(state, "jobs"),
		runcRoot:   filepath.Join(state, "runc"),
		jobs:       map[uint64]*job{},
		leaving:    map[uint64]chan struct{}{},
		cpus:       newCPUSlots(cfg.CPUs, HostCores()),
		registered: make(chan struct{}),
	}
	d.heartbeatMs.Store(DefaultHeartbeat.Milliseconds())
	if err := d.setupTLS(); err != nil { // tls.go
		return nil, err
	}
	for _, dir := range []string{d.jobsDir, d.runcRoot} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	// Jobs see the host's /run read-only; their controller socket is
	// bound over /run/corral (jobsock.go), which must exist to be bound.
	if err := os.MkdirAll(filepath.Dir(api.DefaultSocket), 0o755); err != nil {
		return nil, err
	}
	if d.cg, err = cgroup.Detect(); err != nil {
		return nil, err
	}
	d.cgScope = CgroupScope(cfg.Name, state)
	if err := d.cg.Prepare(cgroup.LeafName(d.cgScope)); err != nil {
		return nil, err
	}
	if d.q, err = eventq.Open(filepath.Join(state, "events")); err != nil {
		return nil, fmt.Errorf("event queue: %w", err)
	}
	if d.gpus, err = newGPUNode(&d.cfg, logger); err != nil {
		return nil, err
	}
	d.sweepSpares() // spareprepared.go: what spares that died left
	if err := d.recover(); err != nil {
		return nil, err
	}
	if d.ln, err = net.Listen("tcp", cfg.Listen); err != nil {
		return nil, fmt.Errorf("--listen %s: %w", cfg.Listen, err)
	}
	if d.addr, err = advertised(cfg.Advertise, d.ln.Addr().(*net.TCPAddr)); err != nil {
		d.ln.Close()
		return nil, err
	}
	return d, nil
}

// advertised picks the host:port ctld should use: --advertise (a URL or
// host:port), else the listen address, with the hostname standing in for
// an unspecified IP.
func advertised(flag string, ln *net.TCPAddr) (string, error) {
	if flag != "" {
		if u, err := url.Parse(flag); err == nil && u.Host != "" {
			flag = u.Host
		}
		if _, _, err := net.SplitHostPort(flag); err != nil {
			return "", fmt.Errorf("--advertise %q is not host:port or http://host:port", flag)
		}
		return flag, nil
	}
	host := ln.IP.String()
	if ln.IP.IsUnspecified() {
		h, err := os.Hostname()
		if err != nil {
			return "", fmt.Errorf("listening on all addresses and no hostname to advertise; pass --advertise: %w", err)
		}
		host = h
	}
	return net.JoinHostPort(host, strconv.Itoa(ln.Port)), nil
}

func randomID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Addr is the advertised host:port of the node plane.
func (d *Daemon) Addr() string { return d.addr }

// Name is the node's name.
func (d *Daemon) Name() string { return d.cfg.Name }

// StateDir is the resolved state directory.
func (d *Daemon) StateDir() string { return d.cfg.StateDir }

// Registered is closed once ctld has accepted a registration.
func (d *Daemon) Registered() <-chan struct{} { return d.registered }

// Run serves the node plane, heartbeats and delivers events until ctx
// ends. Jobs keep running after Run returns: their shims do not depend on
// noded.
func (d *Daemon) Run(ctx context.Context) error {
	stopCreds, err := d.startCredentials(ctx) // credsock.go
	if err != nil {
		return err
	}
	defer stopCreds()
	// Anyone on the network can connect: a connection that idles or
	// trickles a request is closed, so none holds a descriptor for good.
	srv := &http.Server{Handler: d.handler(), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, IdleTimeout: time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- d.serve(srv) }() // tls.go: TLS when ctld's URL is https
	d.loops.Add(4)
	go func() { defer d.loops.Done(); d.checkShimFeatures(ctx) }() // a warning only: registering need not wait
	go func() { defer d.loops.Done(); d.superviseMPS(ctx) }()      // gpus.go
	go func() { defer d.loops.Done(); d.heartbeat(ctx) }()
	go func() {
		defer d.loops.Done()
		d.q.Run(ctx, func(ctx context.Context, evs []api.JobEvent) error {
			return d.ctld.Do(ctx, http.MethodPost, "/v1/node/events", api.EventsRequest{Events: evs}, nil)
		}, d.log.Printf)
	}()
	go d.startSpare(nil) // spareshim.go; nothing without Config.SpareShim
	d.log.Printf("corral-noded %s: serving on %s (advertised %s), ctld %s, %d CPUs, %d MiB, cgroup %s, state %s",
		d.cfg.Name, d.ln.Addr(), d.addr, d.cfg.CtldURL, d.cfg.CPUs, d.cfg.MemBytes>>20, d.cg.Mode, d.cfg.StateDir)
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	d.loops.Wait()
	d.stopSpare() // spareshim.go
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// Running lists the jobs this node runs (runningJobs) or whose end ctld
// has not yet acknowledged, as sent in every heartbeat.
func (d *Daemon) Running() []uint64 {
	set := map[uint64]bool{}
	for _, id := range d.runningJobs() {
		set[id] = true
	}
	for _, id := range d.q.Jobs(api.EventEnded) {
		set[id] = true
	}
	return sortedIDs(set)
}

func sortedIDs(set map[uint64]bool) []uint64 {
	out := make([]uint64, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// heartbeat registers at start and then every interval ctld asks for,
// cancelling the jobs ctld no longer wants.
func (d *Daemon) heartbeat(ctx context.Context) {
	failing := false
	for {
		req := api.RegisterRequest{
			Name: d.cfg.Name, Addr: d.addr, CPUs: d.cfg.CPUs, MemBytes: d.cfg.MemBytes,
			Running: d.Running(), BootID: d.bootID,
			GPUs: d.gpus.devices(), FGPUPerGPUHundredths: int(d.cfg.FGPUPerGPU),
			MountRoots: d.cfg.MountRoots,
		}
		var resp api.RegisterResponse
		err := d.ctld.Do(ctx, http.MethodPost, "/v1/node/register", req, &resp)
		switch {
		case err == nil:
			if resp.HeartbeatInterval > 0 {
				d.heartbeatMs.Store(resp.HeartbeatInterval)
			}
			if failing {
				d.log.Printf("heartbeat: ctld is back")
				d.q.Poke()
			}
			failing = false
			d.regOnce.Do(func() {
				d.log.Printf("registered with ctld %s as %s", d.cfg.CtldURL, d.cfg.Name)
				close(d.registered)
			})
			for _, id := range resp.Kill {
				d.cancel(id, "ctld no longer wants it")
			}
		case ctx.Err() != nil:
			return
		case !failing:
			d.log.Printf("heartbeat: %v (retrying)", err)
			failing = true
		}
		t := time.NewTimer(time.Duration(d.heartbeatMs.Load()) * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// CgroupScope is name-<first 8 hex digits of sha256(state dir)>: how a
// daemon with that name and (resolved) state directory names its
// cgroups, corral-<scope>-job<id>.
func CgroupScope(name, stateDir string) string {
	sum := sha256.Sum256([]byte(stateDir))
	return name + "-" + hex.EncodeToString(sum[:4])
}

// checkShimFeatures warns when the shim binary cannot filter jobs' system
// calls (built without -tags seccomp), or does not answer.
func (d *Daemon) checkShimFeatures(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	argv := append(append([]string(nil), d.cfg.ShimCommand...), shim.FeaturesArg)
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
	switch {
	case err != nil:
		d.log.Printf("warning: %s %s: %v", strings.Join(d.cfg.ShimCommand, " "), shim.FeaturesArg, err)
	case !slices.Contains(strings.Fields(string(out)), shim.FeatureSeccomp):
		d.log.Printf("warning: %s was built without -tags seccomp: jobs run without the default syscall filter (docs/security.md)", d.cfg.ShimCommand[0])
	}
}
