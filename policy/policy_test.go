package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

func mustSet(t *testing.T) (*Set, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policies.json")
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return s, path
}

func TestSetPersistsAndValidates(t *testing.T) {
	s, path := mustSet(t)
	alice := api.Policy{Kind: api.PolicyUser, Name: "alice", Limits: api.Limits{MaxCPUs: 1}}
	lab := api.Policy{Kind: api.PolicyAccount, Name: "lab", Limits: api.Limits{MaxMemBytes: 4 << 30}}
	for _, p := range []api.Policy{alice, lab} {
		if err := s.Put(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []api.Policy{
		{Kind: "group", Name: "x", Limits: api.Limits{MaxCPUs: 1}},
		{Kind: api.PolicyUser, Name: "", Limits: api.Limits{MaxCPUs: 1}},
		{Kind: api.PolicyUser, Name: "bob", Limits: api.Limits{MaxCPUs: -1}},
	} {
		if err := s.Put(bad); err == nil {
			t.Errorf("Put(%+v) accepted", bad)
		}
	}
	again, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := again.List(); len(got) != 2 || got[0] != lab || got[1] != alice {
		t.Errorf("reloaded %+v", got)
	}
	u, a := again.Limits("alice", "lab")
	if u.MaxCPUs != 1 || a.MaxMemBytes != 4<<30 {
		t.Errorf("limits %+v %+v", u, a)
	}
	// All-zero limits remove a policy.
	if err := again.Put(api.Policy{Kind: api.PolicyUser, Name: "alice"}); err != nil {
		t.Fatal(err)
	}
	if got := again.List(); len(got) != 1 {
		t.Errorf("after removal: %+v", got)
	}
	// A failed save changes nothing.
	os.Chmod(filepath.Dir(path), 0o500)
	defer os.Chmod(filepath.Dir(path), 0o700)
	if os.Geteuid() != 0 {
		if err := again.Put(alice); err == nil || len(again.List()) != 1 {
			t.Errorf("unsaved put: %v, %+v", err, again.List())
		}
	}
}

func TestCheckSubmit(t *testing.T) {
	l := api.Limits{MaxCPUsPerJob: 4, MaxMemPerJob: 8 << 30, MaxFGPUPerJob: 150, MaxPendingJobs: 3}
	tests := []struct {
		r          Request
		pending, n int
		want       string
	}{
		{Request{CPUs: 4, MemBytes: 8 << 30, FGPU: 150}, 0, 1, ""},
		{Request{CPUs: 5}, 0, 1, "asks for 5 CPUs; the policy of user alice allows at most 4 per job"},
		{Request{CPUs: 1, MemBytes: 9 << 30}, 0, 1, "9G of memory"},
		{Request{CPUs: 1, FGPU: 200}, 0, 1, "2 fGPU; the policy of user alice allows at most 1.50"},
		{Request{CPUs: 1}, 2, 1, ""},
		{Request{CPUs: 1}, 3, 1, "has 3 pending jobs; the policy allows at most 3"},
		{Request{CPUs: 1}, 1, 5, "pending jobs"}, // an array of 5
	}
	for _, tc := range tests {
		err := CheckSubmit("user alice", l, tc.r, tc.pending, tc.n)
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckSubmit(%+v, %d, %d) = %v, want %q", tc.r, tc.pending, tc.n, err, tc.want)
		}
	}
}

func TestCheckStartWithTally(t *testing.T) {
	s, _ := mustSet(t)
	s.Put(api.Policy{Kind: api.PolicyUser, Name: "alice", Limits: api.Limits{MaxCPUs: 1}})
	s.Put(api.Policy{Kind: api.PolicyUser, Name: "bob", Limits: api.Limits{MaxRunningJobs: 2, MaxMemBytes: 3 << 30}})
	s.Put(api.Policy{Kind: api.PolicyAccount, Name: "lab", Limits: api.Limits{MaxFGPU: 100}})
	one := Request{CPUs: 1, MemBytes: 1 << 30}
	tally := NewTally()
	steps := []struct {
		user, account string
		r             Request
		want          api.Reason
	}{
		{"alice", "", one, ""},
		{"alice", "", one, api.ReasonPolicyMaxCPUs}, // the acceptance case: 1 CPU, second 1-CPU job waits
		{"carol", "", Request{CPUs: 64}, ""},        // no policy
		{"bob", "", one, ""},
		{"bob", "", Request{CPUs: 1, MemBytes: 2 << 30}, ""},
		{"bob", "", one, api.ReasonPolicyMaxRunningJobs},
		{"dave", "lab", Request{CPUs: 1, FGPU: 60}, ""},
		{"erin", "lab", Request{CPUs: 1, FGPU: 60}, api.ReasonPolicyMaxFGPU}, // the account's limit
	}
	for i, st := range steps {
		got := tally.Check(s, st.user, st.account, st.r)
		if got != st.want {
			t.Errorf("step %d (%s): %q, want %q", i, st.user, got, st.want)
		}
		if got == "" {
			tally.AddRunning(st.user, st.account, st.r)
		}
	}
	if u := tally.Users["bob"]; u.Running != 2 || u.MemBytes != 3<<30 {
		t.Errorf("bob holds %+v", u)
	}
	m := NewTally()
	m.AddRunning("bob", "", Request{MemBytes: 3 << 30})
	if got := m.Check(s, "bob", "", Request{MemBytes: 1}); got != api.ReasonPolicyMaxMem {
		t.Errorf("memory limit: %q", got)
	}
}
