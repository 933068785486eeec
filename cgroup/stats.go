package cgroup

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Usage is what a job consumed, read before its cgroup is destroyed.
type Usage struct {
	PeakMemBytes int64
	CPUTimeUsec  int64
	// OOMKills counts processes the kernel's OOM killer killed in the job.
	OOMKills int64
}

// ReadUsage reads a job's usage from the directories of its cgroup (keys as
// in Placement.Dirs or libcontainer's State().CgroupPaths). It reads every
// value it can: a file an older kernel lacks (v2 memory.peak before 5.19,
// v1 oom_kill before 4.13) leaves that value 0, and the first error is
// returned beside what was read.
func ReadUsage(mode Mode, dirs map[string]string) (Usage, error) {
	var u Usage
	var first error
	keep := func(v int64, err error) int64 {
		if err != nil && first == nil {
			first = err
		}
		return v
	}
	if mode == ModeV2 {
		d := dirs[""]
		u.PeakMemBytes = keep(readInt(d, "memory.peak"))
		u.OOMKills = keep(readKeyed(d, "memory.events", "oom_kill"))
		u.CPUTimeUsec = keep(readKeyed(d, "cpu.stat", "usage_usec"))
		return u, first
	}
	mem := dirs["memory"]
	u.PeakMemBytes = keep(readInt(mem, "memory.max_usage_in_bytes"))
	u.OOMKills = keep(readKeyed(mem, "memory.oom_control", "oom_kill"))
	u.CPUTimeUsec = keep(readInt(dirs["cpuacct"], "cpuacct.usage")) / 1000
	return u, first
}

// ReadOOMKills reads how many processes the kernel's OOM killer killed in
// a cgroup and below it (dirs keyed as ReadUsage's): v1's
// memory.oom_control when the cgroup has a v1 memory controller (hybrid
// too), else cgroup2's memory.events. A step's runner reads its job's
// before and after the step, to tell an OOM-killed step.
func ReadOOMKills(dirs map[string]string) (int64, error) {
	if mem, ok := dirs["memory"]; ok {
		return readKeyed(mem, "memory.oom_control", "oom_kill")
	}
	return readKeyed(dirs[""], "memory.events", "oom_kill")
}

// Applied is the set of limits a cgroup actually has. Unlimited values
// ("max", or v1's huge page-aligned sentinel) read as -1.
type Applied struct {
	MemBytes int64
	// MemSwapBytes is memory+swap (v1 memsw; v2 memory.max + swap.max);
	// 0 when the kernel does not account swap.
	MemSwapBytes  int64
	CPUQuotaUsec  int64
	CPUPeriodUsec int64
	Cpuset        string
	MaxPids       int64
}

// ReadApplied reads a cgroup's limits back.
func ReadApplied(mode Mode, dirs map[string]string) (Applied, error) {
	var a Applied
	var err error
	if mode == ModeV2 {
		d := dirs[""]
		if a.MemBytes, err = readInt(d, "memory.max"); err != nil {
			return a, err
		}
		if swap, err := readInt(d, "memory.swap.max"); err == nil && a.MemBytes >= 0 && swap >= 0 {
			a.MemSwapBytes = a.MemBytes + swap
		} else if err == nil {
			a.MemSwapBytes = -1
		}
		cpuMax, err := os.ReadFile(filepath.Join(d, "cpu.max"))
		if err != nil {
			return a, err
		}
		f := strings.Fields(string(cpuMax))
		if len(f) != 2 {
			return a, fmt.Errorf("%s/cpu.max: unexpected %q", d, cpuMax)
		}
		if a.CPUQuotaUsec, err = parseLimit(f[0]); err != nil {
			return a, err
		}
		if a.CPUPeriodUsec, err = parseLimit(f[1]); err != nil {
			return a, err
		}
		if a.Cpuset, err = readString(d, "cpuset.cpus"); err != nil {
			return a, err
		}
		a.MaxPids, err = readInt(d, "pids.max")
		return a, err
	}
	mem := dirs["memory"]
	if a.MemBytes, err = readInt(mem, "memory.limit_in_bytes"); err != nil {
		return a, err
	}
	if v, err := readInt(mem, "memory.memsw.limit_in_bytes"); err == nil {
		a.MemSwapBytes = v
	}
	if a.CPUQuotaUsec, err = readInt(dirs["cpu"], "cpu.cfs_quota_us"); err != nil {
		return a, err
	}
	if a.CPUPeriodUsec, err = readInt(dirs["cpu"], "cpu.cfs_period_us"); err != nil {
		return a, err
	}
	if a.Cpuset, err = readString(dirs["cpuset"], "cpuset.cpus"); err != nil {
		return a, err
	}
	a.MaxPids, err = readInt(dirs["pids"], "pids.max")
	return a, err
}

// v1 reports "no limit" as the largest page-aligned int64.
const v1Unlimited = 0x7FFFFFFFFFFFF000

func parseLimit(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "max" || s == "-1" {
		return -1, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, err
	}
	if n >= v1Unlimited {
		return -1, nil
	}
	return n, nil
}

func readString(dir, name string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("no cgroup directory to read %s from", name)
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	return string(bytes.TrimSpace(b)), err
}

func readInt(dir, name string) (int64, error) {
	s, err := readString(dir, name)
	if err != nil {
		return 0, err
	}
	n, err := parseLimit(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
	}
	return n, nil
}

// readKeyed reads "key value" lines (memory.events, cpu.stat, oom_control).
func readKeyed(dir, name, key string) (int64, error) {
	if dir == "" {
		return 0, fmt.Errorf("no cgroup directory to read %s from", name)
	}
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == key {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s has no %s line", filepath.Join(dir, name), key)
}
