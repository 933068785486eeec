package ctld

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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

// close releases the listener (serve may not have run).
func (m *metrics) close() {
	if m != nil {
		m.ln.Close()
	}
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
	if err := serveUntil(ctx, srv, m.ln); err != nil {
		log.Printf("metrics: %v", err)
	}
}

// serveUntil serves ln with srv until ctx ends, then shuts srv down
// (a second for requests under way); it returns Serve's error, if any
// other than the shutdown. The metrics and dashboard listeners use it.
func serveUntil(ctx context.Context, srv *http.Server, ln net.Listener) error {
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// MetricsAddr is where the Prometheus endpoint listens ("" for none).
func (s *Server) MetricsAddr() string { return s.metrics.Addr() }
