package jobspec

import (
	"testing"

	"github.com/corral-hpc/corral/api"
)

// How a job shares its nodes, from the command line: the last of
// --exclusive and -s wins, --mem=0 asks for all of each node's memory, and
// what corral cannot do is refused with one line.
func TestSharingOptions(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		exclusive string
		over, all bool
	}{
		{[]string{"--exclusive"}, "node", false, false},
		{[]string{"--exclusive=user"}, "user", false, false},
		{[]string{"-s"}, "", true, false},
		{[]string{"--exclusive", "-s"}, "", true, false},
		{[]string{"-s", "--exclusive"}, "node", false, false},
		{[]string{"--oversubscribe", "--exclusive=user"}, "user", false, false},
		{[]string{"--mem=0"}, "", false, true},
		{[]string{"--mem=0", "--mem=2G"}, "", false, false},
		{[]string{"--mem-per-cpu=0"}, "", false, true}, // as Slurm: MinMemoryNode=0, the whole node's
		{[]string{"--mem-per-cpu=0", "--mem-per-cpu=1G"}, "", false, false},
		{[]string{"--exclusive", "--mem=0"}, "node", false, true},
	} {
		r := MustParseArgs(t, tc.args...)
		if s := r.Spec; s.Exclusive != tc.exclusive || s.OverSubscribe != tc.over || s.MemWholeNode != tc.all || len(r.Warnings) > 0 {
			t.Errorf("%q: exclusive %q, oversubscribe %v, mem whole node %v, warnings %q; want %q, %v, %v, none",
				tc.args, s.Exclusive, s.OverSubscribe, s.MemWholeNode, r.Warnings, tc.exclusive, tc.over, tc.all)
		}
	}
	s := newScripts("job.sh", plain)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--exclusive=mcs", "job.sh"}, "--exclusive=mcs: corral has no MCS labels; use --exclusive or --exclusive=user"},
		{[]string{"--exclusive=topo", "job.sh"}, "--exclusive=topo: corral has no network topology; use --exclusive or --exclusive=user"},
		{[]string{"--exclusive=nodes", "job.sh"}, `invalid --exclusive "nodes": use --exclusive or --exclusive=user`},
		{[]string{"--mem=0", "--mem-per-cpu=1G", "job.sh"}, "--mem, --mem-per-cpu and --mem-per-gpu are mutually exclusive (got --mem and --mem-per-cpu)"},
	} {
		_, err := ParseAt(tc.args, s.read, testNow)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: got %v, want %q", tc.args, err, tc.want)
		}
	}
}

// A request sent without the CLI is judged alike: one line for each
// combination the options cannot make.
func TestValidateSharing(t *testing.T) {
	for _, tc := range []struct {
		name string
		mut  func(*api.JobSpec)
		want string
	}{
		{"exclusive", func(s *api.JobSpec) { s.Exclusive = "node" }, ""},
		{"user", func(s *api.JobSpec) { s.Exclusive = "user" }, ""},
		{"oversubscribe", func(s *api.JobSpec) { s.OverSubscribe = true }, ""},
		{"mem whole node", func(s *api.JobSpec) { s.MemWholeNode, s.MemBytes = true, 0 }, ""},
		{"mcs", func(s *api.JobSpec) { s.Exclusive = "mcs" }, "--exclusive=mcs: corral has no MCS labels; use --exclusive or --exclusive=user"},
		{"unknown", func(s *api.JobSpec) { s.Exclusive = "yes" }, `invalid exclusive "yes" (valid: node, user)`},
		{"both", func(s *api.JobSpec) { s.Exclusive, s.OverSubscribe = "node", true },
			"--oversubscribe and --exclusive cannot be combined: a job either shares its nodes or has them to itself"},
		{"mem=0 per CPU", func(s *api.JobSpec) { s.MemWholeNode, s.MemBytes, s.MemPerCPU = true, 0, 1<<30 },
			"--mem=0 (all of each node's memory) and --mem-per-cpu cannot be combined"},
		{"mem=0 and bytes", func(s *api.JobSpec) { s.MemWholeNode, s.MemBytes = true, 1<<30 },
			"--mem=0 asks for all of each node's memory, but the request also gives mem_bytes=1073741824"},
	} {
		s := validSpec()
		tc.mut(&s)
		err := Validate(&s)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}
