package ctld

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/corral-hpc/corral/api"
)

// The gauges of the metrics endpoint, computed from the controller's
// state at each scrape.

var (
	descJobs      = prometheus.NewDesc("corral_jobs", "Jobs by state and partition (finished jobs the controller still remembers included).", []string{"state", "partition"}, nil)
	descCPUs      = prometheus.NewDesc("corral_partition_cpus", "CPUs of a partition's nodes: allocated or total.", []string{"partition", "kind"}, nil)
	descMem       = prometheus.NewDesc("corral_partition_memory_bytes", "Memory of a partition's nodes: allocated or total.", []string{"partition", "kind"}, nil)
	descFGPU      = prometheus.NewDesc("corral_partition_fgpu", "fGPU of a partition's nodes (in GPUs): allocated or total.", []string{"partition", "kind"}, nil)
	descNodes     = prometheus.NewDesc("corral_nodes", "Nodes by state.", []string{"state"}, nil)
	descPolicyCnt = prometheus.NewDesc("corral_policies", "Resource policies defined.", nil, nil)
)

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
	for _, st := range []api.NodeState{api.NodeIdle, api.NodeMixed, api.NodeAllocated, api.NodeCompleting, api.NodeDown, api.NodeDraining, api.NodeDrained} {
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
