package cgroup

import (
	"os"
	"reflect"
	"strconv"
	"testing"

	"github.com/opencontainers/cgroups"
	_ "github.com/opencontainers/cgroups/devices" // device rules need the v1/v2 device setters
	"github.com/opencontainers/cgroups/manager"
)

// TestRealJobCgroup creates a job cgroup on this host through libcontainer's
// manager exactly as the shim does, checks that the library put it where
// Placement says, reads the limits and usage back, destroys it and checks
// that no directory is left in any hierarchy.
func TestRealJobCgroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates cgroups")
	}
	h, err := Detect()
	if err != nil {
		t.Fatal(err)
	}
	if (h.Mode == ModeV2) != cgroups.IsCgroup2UnifiedMode() || (h.Mode == ModeHybrid) != cgroups.IsCgroup2HybridMode() {
		t.Fatalf("detected %s, but the cgroups library disagrees (unified %v, hybrid %v)",
			h.Mode, cgroups.IsCgroup2UnifiedMode(), cgroups.IsCgroup2HybridMode())
	}
	if err := h.Prepare(LeafName("cgtest")); err != nil {
		t.Fatal(err)
	}
	node := "cgtest" + strconv.Itoa(os.Getpid())
	p, err := h.Job(node, 1)
	if err != nil {
		t.Fatal(err)
	}
	lim := Limits{Cpuset: "0", CPUs: 1, MemBytes: 256 << 20, MaxPids: 77}
	cg := &cgroups.Cgroup{Path: p.Path, Resources: h.Resources(lim)}
	m, err := manager.New(cg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Destroy()
	if err := m.Apply(-1); err != nil {
		t.Fatal(err)
	}
	if err := m.Set(cg.Resources); err != nil {
		t.Fatal(err)
	}
	if got := m.GetPaths(); !reflect.DeepEqual(got, p.Dirs) {
		t.Fatalf("library placed the cgroup at\n%v\nPlacement says\n%v", got, p.Dirs)
	}
	a, err := ReadApplied(h.Mode, p.Dirs)
	if err != nil {
		t.Fatal(err)
	}
	want := Applied{MemBytes: 256 << 20, CPUQuotaUsec: 100000, CPUPeriodUsec: 100000, Cpuset: "0", MaxPids: 77}
	if h.SwapAccounted() {
		want.MemSwapBytes = 256 << 20
	} else {
		want.MemSwapBytes = a.MemSwapBytes
	}
	if a != want {
		t.Errorf("applied = %+v, want %+v", a, want)
	}
	if _, err := ReadUsage(h.Mode, p.Dirs); err != nil {
		t.Errorf("reading usage: %v", err)
	}
	if err := m.Destroy(); err != nil {
		t.Fatal(err)
	}
	for c, d := range p.Dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("controller %q: %s still exists after Destroy (%v)", c, d, err)
		}
	}
}
