package cgroup

import (
	"strings"
	"testing"
)

// TestMemberHolds: a process of the job (in its cgroup or below) is held;
// one in the parent, a sibling whose name extends the job's, another
// hierarchy's line or no line at all is not.
func TestMemberHolds(t *testing.T) {
	h, err := DetectFrom(strings.NewReader(hybridMountinfo), strings.NewReader(hybridSelf))
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.Job("dev1", 7)
	if err != nil {
		t.Fatal(err)
	}
	m, err := h.MemberOf(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Member{Key: "memory", Path: "/process_api/abc/corral-dev1-job7"}); m != want {
		t.Fatalf("MemberOf = %+v, want %+v", m, want)
	}
	for _, tc := range []struct {
		proc string
		want bool
	}{
		{"4:memory:/process_api/abc/corral-dev1-job7\n0::/\n", true},
		{"4:memory:/process_api/abc/corral-dev1-job7/sub\n", true},
		{"4:memory:/process_api/abc\n", false},
		{"4:memory:/process_api/abc/corral-dev1-job70\n", false},
		{"4:memory:/elsewhere/process_api/abc/corral-dev1-job7\n", false},
		{"1:cpu:/process_api/abc/corral-dev1-job7\n", false},
	} {
		got, err := m.Holds(strings.NewReader(tc.proc))
		if err != nil || got != tc.want {
			t.Errorf("Holds(%q) = %v, %v; want %v", tc.proc, got, err, tc.want)
		}
	}
}

// TestMemberOfV2 maps a v2 job cgroup through a mount whose root is a
// sub-cgroup (a cgroup namespace or a bind).
func TestMemberOfV2(t *testing.T) {
	h := &Host{Mode: ModeV2, Unified: "/sys/fs/cgroup", UnifiedRoot: "/ns", Domain: "/sys/fs/cgroup/noded"}
	p, err := h.Job("n", 3)
	if err != nil {
		t.Fatal(err)
	}
	m, err := h.MemberOf(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Member{Key: "", Path: "/ns/noded/corral-n-job3"}); m != want {
		t.Fatalf("MemberOf = %+v, want %+v", m, want)
	}
	if ok, _ := m.Holds(strings.NewReader("0::/ns/noded/corral-n-job3\n")); !ok {
		t.Error("a process in the job's cgroup is not held")
	}
}
