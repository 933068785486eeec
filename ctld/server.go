package ctld

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/authz"
	"github.com/corral-hpc/corral/ctld/config"
	"github.com/corral-hpc/corral/ctld/fairshare"
	"github.com/corral-hpc/corral/ctld/internal/lockorder"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/policy"
	"github.com/corral-hpc/corral/sched"
)

// Defaults for Config's zero fields.
const (
	DefaultStateDir    = "/var/lib/corral"
	DefaultListen      = ":6817"
	DefaultNodeTimeout = 10 * time.Second
	DefaultHeartbeat   = time.Second
	// AddrFile, inside the state directory, holds the node plane's base
	// URL (e.g. "http://127.0.0.1:41234") so tools can find a ctld that
	// listens on a random port.
	AddrFile = "ctld.addr"
	// KeyFile is the cluster key's default name inside the state directory.
	KeyFile = "cluster.key"
)

// Config is how a controller is set up. Zero fields take the defaults.
type Config struct {
	StateDir string // default /var/lib/corral
	Socket   string // user plane Unix socket; default api.DefaultSocket
	Listen   string // node plane TCP address; default ":6817"
	KeyFile  string // cluster key; default <StateDir>/cluster.key, created if missing
	// ConfigFile holds partitions (see package ctld/config). Empty means no
	// file: one default partition "batch" with every node.
	ConfigFile string
	// NodeTimeout is how long a node may miss heartbeats before it is DOWN.
	NodeTimeout time.Duration
	// Heartbeat is the interval told to nodes.
	Heartbeat time.Duration
	// Planner decides what starts; default the configuration file's
	// scheduling keys (sched.DefaultBackfill without them).
	Planner sched.Planner
	// SchedInterval is the timer between scheduling cycles that no event
	// triggered; default 1s.
	SchedInterval time.Duration
	// LaunchFailureHold keeps a node that failed a launch DOWN for this
	// long even if it keeps heartbeating (default 10s), so a node that
	// cannot run jobs does not bounce every job through it each second.
	LaunchFailureHold time.Duration
	// AllocIdleLimit is how long an allocation's client (salloc, srun
	// outside an allocation) may go without renewing it before the
	// allocation is cancelled: corral.conf's InactiveLimit when this is
	// zero, else 15s; negative: never.
	AllocIdleLimit time.Duration
	// Logger gets one line per significant event; default stderr.
	Logger *log.Logger

	// Pipeline settings (PipelineConfig); zero fields take the defaults.
	Pipeline PipelineConfig

	// WebListen is the TCP address of the dashboard ("" for none);
	// WebURL how browsers reach it (default http:// and the bound
	// address); WebTrustedHeader a header a site's sign-on proxy names
	// the user in (off when "", see package web).
	WebListen, WebURL, WebTrustedHeader string
	// WebLinkTTL is how long a login link stays valid (default a minute).
	WebLinkTTL time.Duration
	// AllocSampleEvery is how often the allocation history the admin
	// chart draws takes a sample; 0 takes DefaultAllocSampleEvery.
	AllocSampleEvery time.Duration
	// MetricsListen is the TCP address of the Prometheus endpoint
	// (/metrics); "" serves none.
	MetricsListen string

	// RateLimit is the user plane's sustained requests per second per
	// uid (package authz); 0 takes DefaultRateLimit, negative turns the
	// limit off. RateBurst is the bucket size; 0 takes DefaultRateBurst.
	RateLimit float64
	RateBurst int

	// Connection bounds (connLimits). MaxConnsPerUser bounds a uid's
	// open connections (the socket and remote ones together) and
	// MaxConnsPerHost a TCP address's connections before a request says
	// who is calling; 0 takes the defaults, negative means unbounded.
	// MaxConns bounds all connections but root's, administrators' and
	// nodes'; 0 takes the descriptor limit less a reserve (autoMaxConns).
	MaxConnsPerUser int
	MaxConnsPerHost int
	MaxConns        int
	// ReadTimeout is how long a request (header and body) may take to
	// arrive, and IdleTimeout how long a keep-alive connection may idle,
	// on both listeners; 0 takes DefaultReadTimeout and DefaultIdleTimeout.
	ReadTimeout time.Duration
	IdleTimeout time.Duration

	// TLSSANs are more names and addresses for the controller's TLS
	// certificate (clusterTLS). InsecurePlaintext serves the TCP port as plain
	// HTTP instead of TLS: for tests only, and logged loudly.
	TLSSANs           []string
	InsecurePlaintext bool
}

func (c *Config) setDefaults() {
	if c.StateDir == "" {
		c.StateDir = DefaultStateDir
	}
	if c.Socket == "" {
		c.Socket = api.DefaultSocket
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.KeyFile == "" {
		c.KeyFile = filepath.Join(c.StateDir, KeyFile)
	}
	if c.NodeTimeout <= 0 {
		c.NodeTimeout = DefaultNodeTimeout
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = DefaultHeartbeat
	}
	if c.SchedInterval <= 0 {
		c.SchedInterval = time.Second
	}
	if c.LaunchFailureHold <= 0 {
		c.LaunchFailureHold = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = log.New(os.Stderr, "", log.LstdFlags|log.Lmicroseconds)
	}
	if c.RateLimit == 0 {
		c.RateLimit = DefaultRateLimit
	}
	if c.RateBurst <= 0 {
		c.RateBurst = DefaultRateBurst
	}
	if c.MaxConnsPerUser == 0 {
		c.MaxConnsPerUser = DefaultMaxConnsPerUser
	}
	if c.MaxConnsPerHost == 0 {
		c.MaxConnsPerHost = DefaultMaxConnsPerHost
	}
	if c.MaxConns <= 0 {
		c.MaxConns = autoMaxConns()
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
}

// Server is a running controller. Create it with New, then call Run.
type Server struct {
	cfg     Config
	log     *log.Logger
	key     []byte
	store   *store.Store
	parts   partitions
	planner sched.Planner
	users   *accounts
	// confView is the configuration scontrol show config prints, made
	// at start.
	confView api.ClusterConfig
	// templates are corral.conf's resource templates, fixed at start.
	templates []api.ResourceTemplate
	// allocHist is the recent allocation, sampled for the admin chart.
	allocHist *allocHistory

	mu     lockorder.RWMutex[lockorder.Server]
	q      *queue           // jobs and array jobs, guarded by mu
	nodes  *nodeRegistry    // guarded by mu
	pipe   pipeline         // waiters, requeue avoidance, wake times
	fs     *fairshare.State // priority, usage ledger, eligibility
	ledger *usageLedger     // keeps fs's ledger in the store
	// policies are the resource policies (package policy); they lock
	// themselves.
	policies *policy.Set
	metrics  *metrics    // nil without Config.MetricsListen
	web      *webHost    // nil without Config.WebListen
	gate     *authz.Gate // who may call what, how often (package authz)
	conns    *connLimits // open connections per uid and address
	nonces   nonceCache  // remote credentials already used
	tls      *clusterTLS // the cluster CA and the client side of calls to nodes
	// mpiDefault is corral.conf's MpiDefault, given to srun with each
	// step's grant.
	mpiDefault string

	kick chan struct{}
	// cycleMu serializes scheduling cycles and test-only plans: they
	// share the snapshot builder's buffers.
	cycleMu   lockorder.Mutex[lockorder.Cycle]
	snapshots *snapshotBuilder
	ln        *listeners // the user socket and the TCP port

	// bg tracks launches and signals in flight; bgCtx ends them at shutdown.
	bg       sync.WaitGroup
	bgCtx    context.Context
	bgCancel context.CancelFunc

	runOnce   sync.Once
	closeOnce sync.Once
	closeErr  error
}

// New loads the configuration, the cluster key and the state file, and
// binds both listeners. Nothing is served until Run.
func New(cfg Config) (*Server, error) {
	cfg.setDefaults()
	s := &Server{
		cfg:     cfg,
		log:     cfg.Logger,
		planner: cfg.Planner,
		users:   newAccounts(),
		q:       newQueue(),
		nodes:   newNodeRegistry(),
		kick:    make(chan struct{}, 1),
	}
	s.allocHist = newAllocHistory(cfg.AllocSampleEvery, allocHistorySamples)
	file, err := config.LoadOrDefaults(cfg.ConfigFile)
	if err != nil {
		return nil, err
	}
	s.parts = newPartitions(file.Partitions)
	s.parts.features = file.Features
	s.gate = authz.NewGate(file.Access, s.users, authz.NewLimiter(cfg.RateLimit, cfg.RateBurst))
	s.conns = newConnLimits(&cfg, func(uid uint32) bool { return s.gate.IsAdmin(authz.Caller{UID: uid}) })
	s.cfg.Pipeline.fromFile(file.Pipeline) // Config, then the file, then defaults
	s.cfg.AllocIdleLimit = allocIdleLimit(s.cfg.AllocIdleLimit, file.Pipeline.InactiveLimit)
	s.mpiDefault = file.Steps.MpiDefault
	if s.fs, err = fairshare.New(file.Scheduling, usageRules); err != nil {
		return nil, err
	}
	if s.planner == nil {
		s.planner = file.Scheduling.Planner
	}
	s.confView = configView(file, &s.cfg, s.planner, time.Now())
	s.templates = append([]api.ResourceTemplate{}, file.Templates...)
	if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	dbPath := filepath.Join(cfg.StateDir, store.FileName)
	ran, err := store.HasRun(dbPath) // before Open, which marks the directory
	if err != nil {
		return nil, err
	}
	if s.policies, err = policy.Load(filepath.Join(cfg.StateDir, PoliciesFile)); err != nil {
		return nil, err
	}
	s.snapshots = newSnapshotBuilder(s.q, s.nodes, s.parts, s.policies, s.fs, &s.cfg.Pipeline)
	// The state file first: a damaged or lost one is the refusal to give.
	if s.store, err = store.Open(dbPath, store.Options{}); err != nil {
		return nil, err
	}
	// The queue's observers: the pipeline's requeue avoidance, and the
	// fair-share charge of a run that ends, up to its end; after each
	// commit, the dashboard's live pages (s.web is set below).
	s.q.attach(s.store, func(c change) {
		s.pipe.observe(c)
		old, next := c.jobs()
		s.fs.ChargeEnd(old, next, time.Now())
	}, s.pipe.wakeWaiters, partsStopper(s), func() { s.web.changed() })
	if s.key, s.tls, err = loadIdentity(&s.cfg, ran); err != nil { // before load: known nodes get clients pinned to the CA
		s.store.Close()
		return nil, err
	}
	if err := s.load(time.Now()); err != nil {
		s.store.Close()
		return nil, err
	}
	s.ledger = newUsageLedger(s.fs, s.store, s.q, &s.mu, s.log)
	if err := s.ledger.load(time.Now()); err != nil { // after the jobs: it re-charges their runs
		s.store.Close()
		return nil, err
	}
	if s.ln, err = listen(&s.cfg, s.conns, s.tls); err != nil {
		s.store.Close()
		return nil, err
	}
	if s.metrics, err = newMetrics(s, cfg.MetricsListen); err != nil {
		s.ln.close()
		s.store.Close()
		return nil, err
	}
	if s.web, err = newWebHost(s, &s.cfg); err != nil {
		s.ln.close()
		s.metrics.close()
		s.store.Close()
		return nil, err
	}
	s.bgCtx, s.bgCancel = context.WithCancel(context.Background())
	return s, nil
}

// load fills memory from the store. Known nodes start DOWN until they
// register again.
func (s *Server) load(now time.Time) error {
	s.pipe.init()
	if err := s.q.load(); err != nil {
		return err
	}
	nodes, err := s.store.Nodes()
	if err != nil {
		return err
	}
	s.nodes.load(nodes, now, s.parts, s.tls.nodeClient)
	// Everything is in memory now: neither the file's mapped pages nor the
	// decoding's garbage need to stay resident (docs/benchmarks.md, Load).
	if err := s.store.DropMappedPages(); err != nil {
		s.log.Printf("after loading: %v", err)
	}
	go debug.FreeOSMemory() // a full GC; serving need not wait for it
	return nil
}

// SocketPath is the user plane's Unix socket.
func (s *Server) SocketPath() string { return s.cfg.Socket }

// NodeURL is the node plane's base URL, as written to ctld.addr.
func (s *Server) NodeURL() string { return s.ln.url }

// Run serves both planes and schedules until ctx ends, then shuts down
// cleanly and closes the state file. It returns nil after a requested
// shutdown. Run may be called once.
func (s *Server) Run(ctx context.Context) error {
	err := errors.New("ctld: Run called twice")
	s.runOnce.Do(func() { err = s.run(ctx) })
	return err
}

func (s *Server) run(ctx context.Context) error {
	userSrv := s.ln.newHTTPServer(userHandler(s), localConnContext)
	userSrv.RegisterOnShutdown(s.pipe.shutdown) // ends long polls
	// The TCP port: node plane and remote users with a credential.
	nodeSrv := s.ln.newHTTPServer(tcpHandler(s), remoteConnContext)
	nodeSrv.RegisterOnShutdown(s.pipe.shutdown) // remote users' long polls too
	serveErr := make(chan error, 2)
	go func() { serveErr <- userSrv.Serve(s.ln.user) }()
	go func() { serveErr <- nodeSrv.Serve(s.ln.tcp) }()

	// Nodes known from the store get a full timeout from now to register
	// again before their jobs are given up.
	now := time.Now()
	s.mu.Lock()
	s.nodes.restartClocks(now)
	s.mu.Unlock()

	loops, stopLoops := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.scheduleLoop(loops) }()
	go func() { defer wg.Done(); s.watchNodes(loops) }()
	wg.Add(1)
	go func() { defer wg.Done(); s.housekeep(loops) }()
	wg.Add(1)
	go func() { defer wg.Done(); s.ledger.loop(loops) }()
	wg.Add(1)
	go func() { defer wg.Done(); s.metrics.serve(loops) }() // returns at once without metrics
	wg.Add(1)
	go func() { defer wg.Done(); s.web.serve(loops) }() // returns at once without a dashboard
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.allocHist.run(loops, func(now time.Time) api.AllocSample { return allocSample(s.listNodes(), now) })
	}()

	s.mu.RLock()
	jobs, active := s.q.size()
	s.log.Printf("serving users on %s, nodes on %s (%d jobs, %d active, %d nodes known)",
		s.cfg.Socket, s.ln.url, jobs, active, s.nodes.count())
	s.mu.RUnlock()
	s.Kick()

	var runErr error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		runErr = fmt.Errorf("serving: %w", err)
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	userSrv.Shutdown(shutCtx)
	nodeSrv.Shutdown(shutCtx)
	stopLoops()
	wg.Wait()
	if err := s.Close(); err != nil && runErr == nil {
		runErr = err
	}
	s.log.Printf("stopped")
	return runErr
}

// Close stops launches in flight, releases the listeners and closes the
// state file. Run calls it on the way out; call it yourself only for a
// Server whose Run was never called.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.bgCancel()
		s.bg.Wait()
		s.ln.close()
		s.metrics.close()
		s.web.close()
		os.Remove(s.cfg.Socket)
		os.Remove(filepath.Join(s.cfg.StateDir, AddrFile))
		if err := s.ledger.save(time.Now()); err != nil {
			s.log.Printf("fairshare: saving usage at shutdown: %v (it is re-charged from the job records)", err)
		}
		s.closeErr = s.store.Close()
	})
	return s.closeErr
}
