package slurmfmt

import (
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// How a job shares its nodes prints as Slurm's words, in squeue's %h
// (-O OverSubscribe) and scontrol's OverSubscribe=; a partition's policy
// in sinfo's %h and scontrol show partition.
func TestOverSubscribe(t *testing.T) {
	for _, tc := range []struct {
		spec api.JobSpec
		want string
	}{
		{api.JobSpec{}, "OK"},
		{api.JobSpec{Exclusive: "node"}, "NO"},
		{api.JobSpec{Exclusive: "node", MemWholeNode: true}, "NO"},
		{api.JobSpec{MemWholeNode: true}, "OK"},
		{api.JobSpec{Exclusive: "user"}, "USER"},
		{api.JobSpec{OverSubscribe: true}, "YES"},
	} {
		j := running()
		j.Spec = tc.spec
		if got := jobFields["h"].value(j, &Env{Now: testNow}); got != tc.want {
			t.Errorf("%%h of %+v = %q, want %q", tc.spec, got, tc.want)
		}
		if jobNames["oversubscribe"] != "h" {
			t.Errorf("-O OverSubscribe is not %%h")
		}
		var b strings.Builder
		if err := JobRecord(&b, j, &Env{Now: testNow}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), " OverSubscribe="+tc.want+" ") {
			t.Errorf("scontrol show job of %+v lacks OverSubscribe=%s:\n%s", tc.spec, tc.want, b.String())
		}
	}
	for _, tc := range []struct{ policy, want string }{{"", "NO"}, {"NO", "NO"}, {"YES", "YES"}, {"EXCLUSIVE", "EXCLUSIVE"}} {
		p := &api.Partition{Name: "batch", AllNodes: true, OverSubscribe: tc.policy}
		if got := nodeFields["h"].value(&NodeGroup{Part: p}, &Env{Now: testNow}); got != tc.want {
			t.Errorf("sinfo %%h of OverSubscribe=%q = %q, want %q", tc.policy, got, tc.want)
		}
		var b strings.Builder
		if err := PartitionRecord(&b, p, nil, &Env{Now: testNow}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), " OverSubscribe="+tc.want+"\n") {
			t.Errorf("scontrol show partition of OverSubscribe=%q lacks OverSubscribe=%s:\n%s", tc.policy, tc.want, b.String())
		}
	}
}
