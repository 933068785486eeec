package cli

import (
	"reflect"
	"testing"

	"github.com/corral-hpc/corral/api"
)

func TestSlurmJobRefs(t *testing.T) {
	for _, tc := range []struct {
		words []string
		ids   []uint64
		tasks []api.TaskRef
	}{
		{[]string{"12"}, []uint64{12}, nil},
		{[]string{"12,13", "14"}, []uint64{12, 13, 14}, nil},
		{[]string{"12_3"}, nil, []api.TaskRef{{JobID: 12, Task: 3}}},
		{[]string{"12_[1-3,7],5"}, []uint64{5}, []api.TaskRef{{JobID: 12, Task: 1}, {JobID: 12, Task: 2}, {JobID: 12, Task: 3}, {JobID: 12, Task: 7}}},
	} {
		ids, tasks, err := slurmJobRefs(tc.words)
		if err != nil || !reflect.DeepEqual(ids, tc.ids) || !reflect.DeepEqual(tasks, tc.tasks) {
			t.Errorf("%q: got %v %v %v, want %v %v", tc.words, ids, tasks, err, tc.ids, tc.tasks)
		}
	}
	for _, bad := range []string{"1-5", "12.0", "12_[1-3", "x", "12_[1-4%2]", "0"} {
		if _, _, err := slurmJobRefs([]string{bad}); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
