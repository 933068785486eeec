package cgroup

import (
	"github.com/opencontainers/cgroups"
)

// CPUPeriodUsec is the CFS period jobs get; their quota is CPUs times it.
const CPUPeriodUsec = 100000

// Limits is what a job may use.
type Limits struct {
	// Cpuset lists the cores, e.g. "0-1,4".
	Cpuset string
	// CPUs is the number of CPUs the job asked for; it sets the CFS quota
	// and the CPU weight (several CPUs can share a core when noded is
	// oversubscribed, so this is not the size of Cpuset).
	CPUs     int
	MemBytes int64
	MaxPids  int64
}

// Resources translates limits for libcontainer's cgroup manager. Device
// rules are the container's business and are added there.
func (h *Host) Resources(l Limits) *cgroups.Resources {
	r := &cgroups.Resources{
		CpusetCpus: l.Cpuset,
		CpuPeriod:  CPUPeriodUsec,
		CpuQuota:   int64(l.CPUs) * CPUPeriodUsec,
		CpuShares:  shares(l.CPUs),
		Memory:     l.MemBytes,
	}
	if h.SwapAccounted() {
		// memory+swap total equal to memory: no swap beyond the limit.
		r.MemorySwap = l.MemBytes
	}
	if l.MaxPids > 0 {
		p := l.MaxPids
		r.PidsLimit = &p
	}
	return r
}

func shares(cpus int) uint64 {
	s := uint64(cpus) * 1024
	switch {
	case s < 2:
		return 2
	case s > 262144:
		return 262144
	}
	return s
}
