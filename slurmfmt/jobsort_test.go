package slurmfmt

import (
	"testing"

	"github.com/corral-hpc/corral/api"
)

func TestSortJobs(t *testing.T) {
	jobs := []api.Job{
		{ID: 1, Partition: "b", State: api.StateRunning, Priority: 5},
		{ID: 2, Partition: "a", State: api.StateRunning, Priority: 1},
		{ID: 3, Partition: "a", State: api.StatePending, Priority: 2},
		{ID: 4, Partition: "a", State: api.StatePending, Priority: 9},
	}
	ids := func() []uint64 {
		var out []uint64
		for _, j := range jobs {
			out = append(out, j.ID)
		}
		return out
	}
	for _, tc := range []struct {
		spec string
		want []uint64
	}{
		{SqueueSort, []uint64{4, 3, 2, 1}},
		{"-i", []uint64{4, 3, 2, 1}},
		{"+i", []uint64{1, 2, 3, 4}},
		{"p", []uint64{2, 3, 1, 4}},
		{"t,-P", []uint64{3, 4, 1, 2}},
	} {
		if err := SortJobs(jobs, tc.spec, testNow); err != nil {
			t.Fatal(err)
		}
		got := ids()
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("-S %s: %v, want %v", tc.spec, got, tc.want)
				break
			}
		}
	}
	for _, bad := range []string{"z", "ii", ""} {
		if err := SortJobs(jobs, bad, testNow); err == nil {
			t.Errorf("-S %q was accepted", bad)
		}
	}
}
