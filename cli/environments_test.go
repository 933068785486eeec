package cli

import "testing"

// TestEnvironmentUsageErrors: bad input to image, log, usage and policy
// gets one line, exit 2, and never reaches the controller.
func TestEnvironmentUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"image", "pull"}, "corral image pull: expected 1 argument(s), got 0 (see corral image pull --help)"},
		{[]string{"image", "import", "tf:2.2", "rel/dir"}, `corral image import: SOURCE "rel/dir" must be an absolute path (it is read on the nodes)`},
		{[]string{"image", "list", "x"}, `corral image list: unexpected argument "x"`},
		{[]string{"log"}, "corral log: expected one JOBID (corral log JOBID [-f] [--err])"},
		{[]string{"log", "x"}, `corral log: invalid job id "x": use a positive number`},
		{[]string{"usage", "x"}, `corral usage: unexpected argument "x"`},
		{[]string{"policy", "set", "group", "x", "--max-cpus", "1"}, `corral policy set: invalid policy kind "group": use user or account`},
		{[]string{"policy", "set", "user", "alice", "--max-cpus", "-1"}, `corral policy set: invalid --max-cpus "-1": use a whole number, 0 for no limit`},
		{[]string{"policy", "set", "user", "alice", "--max-mem", "lots"}, `corral policy set: invalid --max-mem "lots": use a size like 64G, 0 for no limit`},
		{[]string{"policy", "set", "user", "alice", "--max-fgpu", "x"}, `corral policy set: invalid --max-fgpu "x": use an amount like 1.5, 0 for no limit`},
		{[]string{"policy", "rm", "user"}, "corral policy rm: expected user|account NAME"},
		{[]string{"policy", "set", "user", "alice"}, "corral policy set: no limits given; name at least one (--max-cpus N, ...) or use corral policy rm"},
	} {
		f := MustFakeCtld(t)
		r := f.run(tc.args...)
		mustFail(t, r, 2, tc.want)
		// policy set reads the existing policies first, after checking
		// its arguments' shape but before its limits: only that GET.
		for _, req := range f.Requests() {
			if req.Method != "GET" || req.Path != "/v1/policies" {
				t.Errorf("%q sent %s %s", tc.args, req.Method, req.Path)
			}
		}
	}
}
