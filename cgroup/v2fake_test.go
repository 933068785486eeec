package cgroup

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeTree lays out files under a temporary "cgroup2 mount" and returns its
// root. Keys are paths relative to the root; values are file contents.
func fakeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func readFake(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPrepareV2FakeTree(t *testing.T) {
	tests := []struct {
		name        string
		controllers string
		own         string // relative to the root
		wantDomain  string // relative
		wantEnable  string
		wantErr     string
	}{
		{name: "service cgroup", controllers: "cpuset cpu io memory hugetlb pids", own: "system.slice/noded.service",
			wantDomain: "system.slice/noded.service", wantEnable: "+memory +cpu +pids +cpuset"},
		{name: "no cpuset is fine", controllers: "cpu memory pids", own: "svc",
			wantDomain: "svc", wantEnable: "+memory +cpu +pids"},
		{name: "already in its leaf after a restart", controllers: "cpu memory pids", own: "svc/corral-n1.noded",
			wantDomain: "svc", wantEnable: "+memory +cpu +pids"},
		{name: "in the leaf of an earlier daemon of this process under another name", controllers: "cpu memory pids", own: "svc/corral-n0-1a2b.noded",
			wantDomain: "svc", wantEnable: "+memory +cpu +pids"},
		{name: "a cgroup merely called corral-", controllers: "cpu memory pids", own: "corral-.noded",
			wantDomain: "corral-.noded", wantEnable: "+memory +cpu +pids"},
		{name: "memory not delegated", controllers: "cpu pids", own: "svc", wantErr: "controllers memory are not available"},
		{name: "root cgroup", controllers: "cpu memory pids", own: "", wantErr: "root cgroup"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			domainRel := tc.wantDomain
			if domainRel == "" {
				domainRel = tc.own
			}
			root := fakeTree(t, map[string]string{
				filepath.Join(domainRel, "cgroup.controllers"):     tc.controllers + "\n",
				filepath.Join(domainRel, "cgroup.subtree_control"): "",
			})
			h := &Host{Mode: ModeV2, Unified: root, UnifiedOwn: filepath.Join(root, tc.own)}
			err := h.Prepare(LeafName("n1"))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tc.wantErr)
				}
				if _, err := os.Stat(filepath.Join(root, tc.own, LeafName("n1"))); err == nil {
					t.Error("a failed Prepare created the leaf anyway")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			domain := filepath.Join(root, tc.wantDomain)
			if h.Domain != domain {
				t.Errorf("domain = %s, want %s", h.Domain, domain)
			}
			if got := readFake(t, filepath.Join(domain, LeafName("n1"), "cgroup.procs")); got != strconv.Itoa(os.Getpid()) {
				t.Errorf("leaf cgroup.procs = %q, want this pid", got)
			}
			if got := readFake(t, filepath.Join(domain, "cgroup.subtree_control")); got != tc.wantEnable {
				t.Errorf("subtree_control = %q, want %q", got, tc.wantEnable)
			}
			p, err := h.Job("n1", 9)
			if err != nil {
				t.Fatal(err)
			}
			if want := "/" + filepath.Join(tc.wantDomain, "corral-n1-job9"); p.Path != want {
				t.Errorf("job path = %q, want %q", p.Path, want)
			}
			if want := filepath.Join(domain, "corral-n1-job9"); p.Dirs[""] != want {
				t.Errorf("job dir = %q, want %q", p.Dirs[""], want)
			}
			spare, err := h.Place(SpareName("n1", "ab12"))
			if err != nil {
				t.Fatal(err)
			}
			if want := "/" + filepath.Join(tc.wantDomain, "corral-n1-spareab12"); spare.Path != want || spare.Dirs[""] != filepath.Join(domain, "corral-n1-spareab12") || len(spare.Dirs) != 1 {
				t.Errorf("spare placement = %+v, want path %q under %s", spare, want, domain)
			}
		})
	}
}

func TestReadV2FakeTree(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"job/memory.max":      "268435456\n",
		"job/memory.swap.max": "0\n",
		"job/memory.peak":     "1048576\n",
		"job/memory.events":   "low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0\n",
		"job/cpu.max":         "200000 100000\n",
		"job/cpu.stat":        "usage_usec 1234567\nuser_usec 1000000\nsystem_usec 234567\n",
		"job/cpuset.cpus":     "0-1\n",
		"job/pids.max":        "max\n",
		"old/memory.max":      "max\n",
		"old/memory.events":   "oom 0\noom_kill 0\n",
		"old/cpu.stat":        "usage_usec 5\n",
		"old/cpu.max":         "max 100000\n",
		"old/cpuset.cpus":     "\n",
		"old/pids.max":        "64\n",
	})
	dirs := map[string]string{"": filepath.Join(root, "job")}
	a, err := ReadApplied(ModeV2, dirs)
	if err != nil {
		t.Fatal(err)
	}
	want := Applied{MemBytes: 256 << 20, MemSwapBytes: 256 << 20, CPUQuotaUsec: 200000, CPUPeriodUsec: 100000, Cpuset: "0-1", MaxPids: -1}
	if a != want {
		t.Errorf("applied = %+v, want %+v", a, want)
	}
	u, err := ReadUsage(ModeV2, dirs)
	if err != nil {
		t.Fatal(err)
	}
	if u != (Usage{PeakMemBytes: 1 << 20, CPUTimeUsec: 1234567, OOMKills: 1}) {
		t.Errorf("usage = %+v", u)
	}
	if n, err := ReadOOMKills(dirs); n != 1 || err != nil {
		t.Errorf("OOM kills = %d, %v; want 1 from memory.events", n, err)
	}

	// An older kernel: no memory.peak, no swap file, unlimited memory.
	old := map[string]string{"": filepath.Join(root, "old")}
	u, err = ReadUsage(ModeV2, old)
	if err == nil || u.CPUTimeUsec != 5 || u.PeakMemBytes != 0 {
		t.Errorf("usage without memory.peak = %+v, %v; want cpu time read and the missing file reported", u, err)
	}
	a, err = ReadApplied(ModeV2, old)
	if err != nil {
		t.Fatal(err)
	}
	if a.MemBytes != -1 || a.MemSwapBytes != 0 || a.CPUQuotaUsec != -1 || a.MaxPids != 64 {
		t.Errorf("applied (unlimited) = %+v", a)
	}
}

func TestReadV1FakeTree(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"memory/j/memory.limit_in_bytes":       "268435456\n",
		"memory/j/memory.memsw.limit_in_bytes": "9223372036854771712\n",
		"memory/j/memory.max_usage_in_bytes":   "4096\n",
		"memory/j/memory.oom_control":          "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n",
		"cpuacct/j/cpuacct.usage":              "2500000\n",
		"cpu/j/cpu.cfs_quota_us":               "-1\n",
		"cpu/j/cpu.cfs_period_us":              "100000\n",
		"cpuset/j/cpuset.cpus":                 "1\n",
		"pids/j/pids.max":                      "4096\n",
	})
	dirs := map[string]string{}
	for _, c := range []string{"memory", "cpuacct", "cpu", "cpuset", "pids"} {
		dirs[c] = filepath.Join(root, c, "j")
	}
	a, err := ReadApplied(ModeV1, dirs)
	if err != nil {
		t.Fatal(err)
	}
	if a != (Applied{MemBytes: 256 << 20, MemSwapBytes: -1, CPUQuotaUsec: -1, CPUPeriodUsec: 100000, Cpuset: "1", MaxPids: 4096}) {
		t.Errorf("applied = %+v", a)
	}
	u, err := ReadUsage(ModeHybrid, dirs)
	if err != nil {
		t.Fatal(err)
	}
	if u != (Usage{PeakMemBytes: 4096, CPUTimeUsec: 2500, OOMKills: 3}) {
		t.Errorf("usage = %+v", u)
	}
	dirs[""] = filepath.Join(root, "unified") // hybrid: the v1 memory controller counts
	if n, err := ReadOOMKills(dirs); n != 3 || err != nil {
		t.Errorf("OOM kills = %d, %v; want 3 from memory.oom_control", n, err)
	}
}

func TestResources(t *testing.T) {
	v2 := &Host{Mode: ModeV2}
	r := v2.Resources(Limits{Cpuset: "2-3", CPUs: 2, MemBytes: 1 << 30, MaxPids: 100})
	if r.CpusetCpus != "2-3" || r.CpuQuota != 200000 || r.CpuPeriod != 100000 || r.Memory != 1<<30 ||
		r.MemorySwap != 1<<30 || r.PidsLimit == nil || *r.PidsLimit != 100 || r.CpuShares != 2048 {
		t.Errorf("resources = %+v", r)
	}
	// A v1 host whose memory hierarchy has no memsw files gets no swap limit
	// (the library would fail writing it).
	v1 := &Host{Mode: ModeV1, V1: []Hierarchy{{Controllers: []string{"memory"}, Own: t.TempDir()}}}
	if r := v1.Resources(Limits{CPUs: 1, MemBytes: 1 << 20}); r.MemorySwap != 0 || r.PidsLimit != nil {
		t.Errorf("v1 without swap accounting: %+v", r)
	}
}
