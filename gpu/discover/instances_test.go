package discover_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/gpu"
	"github.com/corral-hpc/corral/gpu/discover"
)

var migRE = regexp.MustCompile(`^MIG-[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// profileNamed returns a device's profile by name.
func profileNamed(t testing.TB, d gpu.Device, name string) gpu.MIGProfile {
	t.Helper()
	for _, p := range d.MIG {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("device %d has no profile %s", d.Index, name)
	return gpu.MIGProfile{}
}

// freeOf is how many more instances of a profile the device can take.
func freeOf(t testing.TB, src *discover.Source, index int, name string) int {
	t.Helper()
	devs := MustDevices(t, src)
	return profileNamed(t, devs[index], name).Free
}

func TestMockMinorNumbers(t *testing.T) {
	for i, d := range MustDevices(t, MustMock(t, "dgxh100", 3)) {
		if d.Minor != i {
			t.Errorf("device %d has minor %d", i, d.Minor)
		}
	}
	src := discover.From(fakeNVML(false, plainDevice("GPU-0", 0), plainDevice("GPU-1", 0)), "test NVML")
	if devs := MustDevices(t, src); devs[1].Minor != 1 {
		t.Errorf("without a minor number the index stands in: %+v", devs[1])
	}
}

// The seed-003 card with MIG on: instances of the chosen profile are made
// and removed through NVML, the remaining capacity follows, and a full
// card refuses one more.
func TestMockMIGInstances(t *testing.T) {
	src := MustMock(t, "dgxa100", 2, discover.WithMIG(1), discover.WithSeed("n1"))
	devs := MustDevices(t, src)
	p, ok := gpu.MIGProfileFor(devs[1], 50, 200) // a quarter of the card
	if !ok || p.Name != "2g.10gb" {
		t.Fatalf("0.5 of 2 fGPU chose %q %v", p.Name, ok)
	}
	if free := freeOf(t, src, 1, "2g.10gb"); free != 3 {
		t.Fatalf("empty card: %d 2g.10gb free, want 3", free)
	}
	var made []discover.MIGInstance
	for i := 0; i < 3; i++ {
		m, err := src.CreateMIG(1, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if m.Device != 1 || !migRE.MatchString(m.UUID) {
			t.Fatalf("instance %+v", m)
		}
		for _, o := range made {
			if o.UUID == m.UUID || o.GI == m.GI {
				t.Fatalf("instances %+v and %+v are the same", o, m)
			}
		}
		made = append(made, m)
	}
	if free := freeOf(t, src, 1, "2g.10gb"); free != 0 {
		t.Fatalf("three 2g.10gb made: %d free, want 0", free)
	}
	if free := freeOf(t, src, 1, "1g.5gb"); free != 1 {
		t.Fatalf("six of seven slices used: %d 1g.5gb free, want 1", free)
	}
	if _, err := src.CreateMIG(1, p.ID); err == nil || !strings.Contains(err.Error(), "INSUFFICIENT_RESOURCES") {
		t.Fatalf("a fourth 2g.10gb: %v", err)
	}
	if _, err := src.CreateMIG(0, p.ID); err == nil {
		t.Fatal("a MIG instance on a device with MIG off")
	}
	for _, m := range made {
		if err := src.DestroyMIG(m); err != nil {
			t.Fatal(err)
		}
		if err := src.DestroyMIG(m); err != nil {
			t.Fatalf("destroying twice: %v", err)
		}
	}
	if free := freeOf(t, src, 1, "2g.10gb"); free != 3 {
		t.Fatalf("all destroyed: %d free, want 3", free)
	}
	// Another node's instances have other UUIDs (the seed).
	m, err := src.CreateMIG(1, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	other := MustMock(t, "dgxa100", 2, discover.WithMIG(1), discover.WithSeed("n2"))
	m2, err := other.CreateMIG(1, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m.UUID == m2.UUID {
		t.Fatalf("two nodes' first instances: %+v %+v", m, m2)
	}
}
