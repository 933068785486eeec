package cgroup

import (
	"reflect"
	"strings"
	"testing"
)

const hybridMountinfo = `22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`
const hybridSelf = `9:name=systemd:/
8:pids:/
5:devices:/
4:memory:/process_api/abc
3:cpuset:/
2:cpuacct:/
1:cpu:/
0::/
`

func TestDetectFrom(t *testing.T) {
	tests := []struct {
		name       string
		mountinfo  string
		self       string
		wantMode   Mode
		wantOwn    map[string]string // v1 controller -> Own
		wantUni    string
		wantUniOwn string
		wantErr    string
	}{
		{
			name: "hybrid, memory nested", mountinfo: hybridMountinfo, self: hybridSelf, wantMode: ModeHybrid,
			wantOwn: map[string]string{
				"cpu": "/sys/fs/cgroup/cpu", "memory": "/sys/fs/cgroup/memory/process_api/abc",
				"name=systemd": "/sys/fs/cgroup/systemd", "pids": "/sys/fs/cgroup/pids",
			},
			wantUni: "/sys/fs/cgroup/unified", wantUniOwn: "/sys/fs/cgroup/unified",
		},
		{
			name: "v1, comounted cpu,cpuacct",
			mountinfo: `30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct
31 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
`,
			self:     "3:cpu,cpuacct:/user.slice\n2:memory:/user.slice/u1\n",
			wantMode: ModeV1,
			wantOwn: map[string]string{
				"cpu": "/sys/fs/cgroup/cpu,cpuacct/user.slice", "cpuacct": "/sys/fs/cgroup/cpu,cpuacct/user.slice",
				"memory": "/sys/fs/cgroup/memory/user.slice/u1",
			},
		},
		{
			name:      "v1 mount root is a sub-cgroup (container bind)",
			mountinfo: `31 25 0:27 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory` + "\n",
			self:      "2:memory:/docker/abc/sub\n",
			wantMode:  ModeV1,
			wantOwn:   map[string]string{"memory": "/sys/fs/cgroup/memory/sub"},
		},
		{
			name:      "v2 under a service",
			mountinfo: `30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate` + "\n",
			self:      "0::/system.slice/corral-noded.service\n",
			wantMode:  ModeV2, wantUni: "/sys/fs/cgroup",
			wantUniOwn: "/sys/fs/cgroup/system.slice/corral-noded.service",
		},
		{
			name:      "v2 in a cgroup namespace",
			mountinfo: `30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw` + "\n",
			self:      "0::/\n",
			wantMode:  ModeV2, wantUni: "/sys/fs/cgroup", wantUniOwn: "/sys/fs/cgroup",
		},
		{
			name:      "escaped mountpoint",
			mountinfo: `30 23 0:26 / /sys/fs/my\040cgroup rw - cgroup2 cgroup2 rw` + "\n",
			self:      "0::/a\n",
			wantMode:  ModeV2, wantUni: "/sys/fs/my cgroup", wantUniOwn: "/sys/fs/my cgroup/a",
		},
		{
			name:      "own cgroup outside the mount root",
			mountinfo: `31 25 0:27 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory` + "\n",
			self:      "2:memory:/elsewhere\n",
			wantErr:   "outside the root",
		},
		{
			name:      "nothing mounted",
			mountinfo: "27 1 254:0 / / rw - ext4 /dev/vda rw\n",
			self:      "0::/\n",
			wantErr:   "no cgroup file system",
		},
		{
			name:      "hierarchy missing from /proc/self/cgroup",
			mountinfo: `31 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory` + "\n",
			self:      "2:cpu:/\n",
			wantErr:   "not listed",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := DetectFrom(strings.NewReader(tc.mountinfo), strings.NewReader(tc.self))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Mode != tc.wantMode {
				t.Errorf("mode = %s, want %s", h.Mode, tc.wantMode)
			}
			for c, want := range tc.wantOwn {
				hi, ok := h.Controller(c)
				if !ok || hi.Own != want {
					t.Errorf("controller %s: own = %q (found %v), want %q", c, hi.Own, ok, want)
				}
			}
			if h.Unified != tc.wantUni || h.UnifiedOwn != tc.wantUniOwn {
				t.Errorf("unified = %q own %q, want %q own %q", h.Unified, h.UnifiedOwn, tc.wantUni, tc.wantUniOwn)
			}
		})
	}
}

func TestJobPlacement(t *testing.T) {
	hybrid := MustDetectFrom(t, hybridMountinfo, hybridSelf)
	p, err := hybrid.Job("n1", 42)
	if err != nil {
		t.Fatal(err)
	}
	if p.Path != "corral-n1-job42" {
		t.Errorf("v1 path = %q, want the relative corral-n1-job42", p.Path)
	}
	want := map[string]string{
		"memory":       "/sys/fs/cgroup/memory/process_api/abc/corral-n1-job42",
		"cpu":          "/sys/fs/cgroup/cpu/corral-n1-job42",
		"cpuacct":      "/sys/fs/cgroup/cpuacct/corral-n1-job42",
		"cpuset":       "/sys/fs/cgroup/cpuset/corral-n1-job42",
		"devices":      "/sys/fs/cgroup/devices/corral-n1-job42",
		"pids":         "/sys/fs/cgroup/pids/corral-n1-job42",
		"name=systemd": "/sys/fs/cgroup/systemd/corral-n1-job42",
		"":             "/sys/fs/cgroup/unified/corral-n1-job42",
	}
	if !reflect.DeepEqual(p.Dirs, want) {
		t.Errorf("dirs = %v\nwant %v", p.Dirs, want)
	}

	v2 := MustDetectFrom(t, "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "0::/svc\n")
	if _, err := v2.Job("n1", 1); err == nil || !strings.Contains(err.Error(), "Prepare") {
		t.Errorf("v2 placement before Prepare: err = %v, want one naming Prepare", err)
	}
	v2.Domain = "/sys/fs/cgroup/svc"
	p, err = v2.Job("n1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.Path != "/svc/corral-n1-job1" || p.Dirs[""] != "/sys/fs/cgroup/svc/corral-n1-job1" || len(p.Dirs) != 1 {
		t.Errorf("v2 placement = %+v", p)
	}
}

func TestPrepareV1NeedsControllers(t *testing.T) {
	h := MustDetectFrom(t, `31 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory`+"\n", "2:memory:/\n")
	err := h.Prepare(LeafName("n1"))
	if err == nil || !strings.Contains(err.Error(), "cpu, cpuacct, cpuset, pids, devices") {
		t.Fatalf("err = %v, want the missing controllers listed", err)
	}
	full := MustDetectFrom(t, hybridMountinfo, hybridSelf)
	if err := full.Prepare(LeafName("n1")); err != nil {
		t.Fatalf("hybrid host with all controllers: %v", err)
	}
}

// MustDetectFrom is DetectFrom on literal text, failing the test on error.
func MustDetectFrom(t *testing.T, mountinfo, self string) *Host {
	t.Helper()
	h, err := DetectFrom(strings.NewReader(mountinfo), strings.NewReader(self))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestPlaceSpare: a spare's cgroup (SpareName) lands where a job's does,
// on v1 (relative, under each controller's own cgroup), on hybrid (also
// under the unified mount) and on v2 (absolute, under the domain); a
// name that is not one directory name is refused.
func TestPlaceSpare(t *testing.T) {
	name := SpareName("n1", "00ff")
	if name != "corral-n1-spare00ff" {
		t.Fatalf("SpareName = %q, want corral-n1-spare00ff", name)
	}
	v1 := MustDetectFrom(t, `30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct
31 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
`, "3:cpu,cpuacct:/user.slice\n2:memory:/user.slice/u1\n")
	p, err := v1.Place(name)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"cpu":     "/sys/fs/cgroup/cpu,cpuacct/user.slice/" + name,
		"cpuacct": "/sys/fs/cgroup/cpu,cpuacct/user.slice/" + name,
		"memory":  "/sys/fs/cgroup/memory/user.slice/u1/" + name,
	}
	if p.Path != name || !reflect.DeepEqual(p.Dirs, want) {
		t.Errorf("v1 placement = %+v, want path %s and dirs %v", p, name, want)
	}
	hybrid := MustDetectFrom(t, hybridMountinfo, hybridSelf)
	p, err = hybrid.Place(name)
	if err != nil {
		t.Fatal(err)
	}
	if p.Path != name || p.Dirs["memory"] != "/sys/fs/cgroup/memory/process_api/abc/"+name || p.Dirs[""] != "/sys/fs/cgroup/unified/"+name {
		t.Errorf("hybrid placement = %+v", p)
	}
	if j, _ := hybrid.Job("n1", 42); !reflect.DeepEqual(j, mustPlace(t, hybrid, JobName("n1", 42))) {
		t.Errorf("Job(n1, 42) = %+v, want Place(JobName(n1, 42))", j)
	}
	for _, bad := range []string{"", ".", "..", "a/b", "/abs", "../up"} {
		if _, err := hybrid.Place(bad); err == nil {
			t.Errorf("Place(%q) accepted; want an error", bad)
		}
	}
}

func mustPlace(t *testing.T, h *Host, name string) Placement {
	t.Helper()
	p, err := h.Place(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
