package jobspec

import (
	"reflect"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// dep builds a condition; task < 0 means the whole job.
func dep(typ api.DependencyType, id uint64, task int, delay int64) api.DependencyCondition {
	c := api.DependencyCondition{Type: typ, JobID: id, Delay: delay}
	if task >= 0 {
		c.ArrayTask = &task
	}
	return c
}

func TestParseDependency(t *testing.T) {
	const (
		after   = api.DependAfter
		any     = api.DependAfterAny
		ok      = api.DependAfterOK
		notok   = api.DependAfterNotOK
		corr    = api.DependAfterCorr
		single  = api.DependSingleton
		noTask  = -1
		noDelay = 0
	)
	for _, tc := range []struct {
		in     string
		want   *api.Dependency
		bb     bool
		format string
	}{
		{"", nil, false, ""},
		{"0", nil, false, ""},
		{"afterok:20:21,afterany:23", &api.Dependency{Conditions: []api.DependencyCondition{
			dep(ok, 20, noTask, noDelay), dep(ok, 21, noTask, noDelay), dep(any, 23, noTask, noDelay)}},
			false, "afterok:20,afterok:21,afterany:23"},
		{"afterok:20:21?afterany:23", &api.Dependency{Any: true, Conditions: []api.DependencyCondition{
			dep(ok, 20, noTask, noDelay), dep(ok, 21, noTask, noDelay), dep(any, 23, noTask, noDelay)}},
			false, "afterok:20?afterok:21?afterany:23"},
		{"after:5+10:6", &api.Dependency{Conditions: []api.DependencyCondition{
			dep(after, 5, noTask, 600), dep(after, 6, noTask, noDelay)}}, false, "after:5+10,after:6"},
		{"afternotok:7_3", &api.Dependency{Conditions: []api.DependencyCondition{dep(notok, 7, 3, noDelay)}}, false, "afternotok:7_3"},
		{"afterany:7_*", &api.Dependency{Conditions: []api.DependencyCondition{dep(any, 7, noTask, noDelay)}}, false, "afterany:7"},
		{"afterok:9_[1-3,7]", &api.Dependency{Conditions: []api.DependencyCondition{
			dep(ok, 9, 1, noDelay), dep(ok, 9, 2, noDelay), dep(ok, 9, 3, noDelay), dep(ok, 9, 7, noDelay)}},
			false, "afterok:9_1,afterok:9_2,afterok:9_3,afterok:9_7"},
		{"aftercorr:11", &api.Dependency{Conditions: []api.DependencyCondition{dep(corr, 11, noTask, noDelay)}}, false, "aftercorr:11"},
		{"singleton", &api.Dependency{Conditions: []api.DependencyCondition{{Type: single}}}, false, "singleton"},
		{"SINGLETON,AfterOK:4", &api.Dependency{Conditions: []api.DependencyCondition{{Type: single}, dep(ok, 4, noTask, noDelay)}},
			false, "singleton,afterok:4"},
		{"12,13", &api.Dependency{Conditions: []api.DependencyCondition{dep(any, 12, noTask, noDelay), dep(any, 13, noTask, noDelay)}},
			false, "afterany:12,afterany:13"}, // the old form
		{"afterburstbuffer:8", &api.Dependency{Conditions: []api.DependencyCondition{dep(any, 8, noTask, noDelay)}}, true, "afterany:8"},
	} {
		d, bb, err := ParseDependency(tc.in)
		if err != nil {
			t.Errorf("ParseDependency(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(d, tc.want) || bb != tc.bb {
			t.Errorf("ParseDependency(%q) = %+v, bb %v; want %+v, %v", tc.in, d, bb, tc.want, tc.bb)
		}
		if f := FormatDependency(d); f != tc.format {
			t.Errorf("FormatDependency(ParseDependency(%q)) = %q, want %q", tc.in, f, tc.format)
		}
	}
}

func TestParseDependencyErrors(t *testing.T) {
	const hint = "use TYPE:JOBID[:JOBID...] joined by , (all) or ? (any), with TYPE after, afterany, afterok, afternotok or aftercorr, or singleton"
	for _, tc := range []struct{ in, want string }{
		{"afterok:1,afterany:2?afterok:3", "use either , (all must hold) or ? (any is enough), not both"},
		{"afterok:1,", "empty condition: " + hint},
		{"?afterok:1", "empty condition: " + hint},
		{"afterok", `"afterok" has no job ID: ` + hint},
		{"afterok:", `"" is not a job ID: ` + hint},
		{"afterok:0", `"0" is not a job ID: ` + hint},
		{"afterok:x1", `"x1" is not a job ID: ` + hint},
		{"afterok:1:", `"" is not a job ID: ` + hint},
		{"afterok:-1", `"-1" is not a job ID: ` + hint},
		{"afterok:+1", `"" is not a job ID: ` + hint},
		{"before:1", `unknown dependency type "before": ` + hint},
		{"expand:1", `unknown dependency type "expand": ` + hint},
		{"singleton:4", "singleton takes no job IDs"},
		{"singletonx", "singleton takes no job IDs"},
		{"12?13", `"12" has no job ID: ` + hint},
		{"afterok:5+10", "+time is only allowed with after (in afterok:5+10)"},
		{"after:5+0", `delay "0" after job 5 must be a number of minutes from 1`},
		{"after:5+x", `delay "x" after job 5 must be a number of minutes from 1`},
		{"afterok:5_", `bad array task in "5_": "" is not an index: ` + arrayHint},
		{"afterok:5_x", `bad array task in "5_x": "x" is not an index: ` + arrayHint},
		{"afterok:5_[3-1]", `bad task list in "5_[3-1]": use 123_[1-3,7]`},
		{"afterok:5_[1%2]", `bad task list in "5_[1%2]": use 123_[1-3,7]`},
		{"afterok:5_[0-20000]", "more than 10000 jobs"},
		{"afterok:99999999999999999999", `"99999999999999999999" is not a job ID: ` + hint},
	} {
		_, _, err := ParseDependency(tc.in)
		want := "invalid --dependency " + quoteValue(tc.in) + ": " + tc.want
		if err == nil || err.Error() != want {
			t.Errorf("ParseDependency(%q) error = %v\nwant %s", tc.in, err, want)
		}
	}
}
