package ctld

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/corral-hpc/corral/api"
)

// metrics is ctld's Prometheus endpoint (Config.MetricsListen); see
// docs/metrics.md. Gauges are computed from the state at each scrape; the
// cycle histogram and the submit counter are updated as things happen.
// A nil *metrics (no address configured) ignores every call.
type metrics struct {
	ln      net.Listener
	reg     *prometheus.Registry
	cycles  prometheus.Histogram
	submits prometheus.Counter
}

var (
	descJobs      = prometheus.NewDesc("corral_jobs", "Jobs by state and partition (finished jobs the controller still remembers included).", []string{"state", "partition"}, nil)
	descCPUs      = prometheus.NewDesc("corral_partition_cpus", "CPUs of a partition's nodes: allocated or total.", []string{"partition", "kind"}, nil)
	descMem       = prometheus.NewDesc("corral_partition_memory_bytes", "Memory of a partition's nodes: allocated or total.", []string{"partition", "kind"}, nil)
	descFGPU      = prometheus.NewDesc("corral_partition_fgpu", "fGPU of a partition's nodes (in GPUs): allocated or total.", []string{"partition", "kind"}, nil)
	descNodes     = prometheus.NewDesc("corral_nodes", "Nodes by state.", []string{"state"}, nil)
	descPolicyCnt = prometheus.NewDesc("corral_policies", "Resource policies defined.", nil, nil)
)

// newMetrics binds addr ("" for no metrics: nil, nil).
func newMetrics(s *Server, addr string) (*metrics, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics address: %w", err)
	}
	m := &metrics{ln: ln, reg: prometheus.NewRegistry(),
		cycles: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "corral_scheduling_cycle_seconds",
			Help: "Duration of scheduling cycles (snapshot, plan, apply).", Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),
		submits: prometheus.NewCounter(prometheus.CounterOpts{Name: "corral_submits_total",
			Help: "Accepted submits (an array counts once); rate() gives submits per second."}),
	}
	m.reg.MustRegister(m.cycles, m.submits, stateCollector{s},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m, nil
}

// Addr is where metrics are served ("" without metrics).
func (m *metrics) Addr() string {
	if m == nil {
		return ""
	}
	return m.ln.Addr().String()
}

func (m *metrics) observeCycle(d time.Duration) {
	if m != nil {
		m.cycles.Observe(d.Seconds())
	}
}

func (m *metrics) submitted() {
	if m != nil {
		m.submits.Inc()
	}
}

// serve runs until ctx ends.
func (m *metrics) serve(ctx context.Context) {
	if m == nil {
		return
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(m.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Printf("metrics: %v", err)
	}
}

// stateCollector reads the controller's state at scrape time.
type stateCollector struct{ s *Server }

func (c stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descJobs, descCPUs, descMem, descFGPU, descNodes, descPolicyCnt} {
		ch <- d
	}
}

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	usage := s.usage("", false)
	for _, p := range usage.Partitions {
		for kind, a := range map[string]api.UsageAmounts{"allocated": p.Allocated, "total": p.Total} {
			ch <- prometheus.MustNewConstMetric(descCPUs, prometheus.GaugeValue, float64(a.CPUs), p.Partition, kind)
			ch <- prometheus.MustNewConstMetric(descMem, prometheus.GaugeValue, float64(a.MemBytes), p.Partition, kind)
			ch <- prometheus.MustNewConstMetric(descFGPU, prometheus.GaugeValue, float64(a.FGPU)/100, p.Partition, kind)
		}
	}
	type key struct{ state, part string }
	jobs := map[key]int{}
	s.mu.RLock()
	for _, j := range s.q.all() {
		jobs[key{string(j.state()), j.rec.Job.Partition}]++
	}
	parts := s.parts.names()
	s.mu.RUnlock()
	// Every partition shows pending and running, zero included, so
	// dashboards have a series to draw from the start.
	for _, p := range parts {
		for _, st := range []api.JobState{api.StatePending, api.StateRunning} {
			if _, ok := jobs[key{string(st), p}]; !ok {
				jobs[key{string(st), p}] = 0
			}
		}
	}
	for k, n := range jobs {
		ch <- prometheus.MustNewConstMetric(descJobs, prometheus.GaugeValue, float64(n), strings.ToLower(k.state), k.part)
	}
	nodes := map[string]int{}
	for _, st := range []api.NodeState{api.NodeIdle, api.NodeMixed, api.NodeAllocated, api.NodeDown, api.NodeDraining, api.NodeDrained} {
		nodes[strings.ToLower(string(st))] = 0
	}
	for _, n := range s.listNodes() {
		nodes[strings.ToLower(string(n.State))]++
	}
	for st, n := range nodes {
		ch <- prometheus.MustNewConstMetric(descNodes, prometheus.GaugeValue, float64(n), st)
	}
	ch <- prometheus.MustNewConstMetric(descPolicyCnt, prometheus.GaugeValue, float64(len(s.policies.List())))
}

// MetricsAddr is where the Prometheus endpoint listens ("" for none).
func (s *Server) MetricsAddr() string { return s.metrics.Addr() }
