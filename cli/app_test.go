package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func TestUnreachableController(t *testing.T) {
	dir := MustWorkDir(t, map[string]string{"job.sh": jobScript})
	sock := filepath.Join(dir, "nobody-home.sock")
	want := "corral: cannot reach the corral controller at " + sock +
		" (is corral-ctld running? set --socket or CORRAL_SOCKET)"
	for _, args := range [][]string{
		{"queue"}, {"nodes"}, {"show", "job", "1"}, {"cancel", "1"}, {"submit", "job.sh"},
	} {
		mustFail(t, runCLI("", append([]string{"--socket", sock}, args...)...), 1, want)
	}
	t.Setenv(api.SocketEnv, sock)
	mustFail(t, runCLI("", "queue"), 1, want)
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "corral: missing command (try corral --help)"},
		{[]string{"frob"}, `corral: unknown command "frob" (try corral --help)`},
		{[]string{"--frob", "queue"}, "corral: unrecognized option --frob"},
		{[]string{"queue", "--frob"}, "corral queue: unrecognized option --frob"},
		{[]string{"queue", "-x"}, "corral queue: unrecognized option -x"},
		{[]string{"queue", "extra"}, `corral queue: unexpected argument "extra"`},
		{[]string{"queue", "-u"}, "corral queue: option --user needs a value"},
		{[]string{"nodes", "extra"}, `corral nodes: unexpected argument "extra"`},
		{[]string{"show"}, "corral show: missing what to show: use corral show job ID"},
		{[]string{"show", "node", "x"}, `corral show: cannot show "node": use corral show job ID`},
		{[]string{"show", "job"}, "corral show job: give exactly one job ID (got 0 arguments)"},
		{[]string{"show", "job", "1", "2"}, "corral show job: give exactly one job ID (got 2 arguments)"},
		{[]string{"show", "job", "x1"}, `corral show job: invalid job id "x1": use a positive number`},
		{[]string{"show", "job", "0"}, `corral show job: invalid job id "0": use a positive number`},
		{[]string{"dev", "--nodes", "0"}, "corral dev: --nodes must be at least 1 (got 0)"},
		{[]string{"dev", "--mem", "12Q"}, `corral dev: invalid --mem "12Q": use a number with an optional K, M, G or T suffix`},
		{[]string{"dev", "--cpus", "x"}, `corral dev: invalid --cpus "x"`},
	} {
		f := MustFakeCtld(t)
		mustFail(t, f.run(tc.args...), 2, tc.want)
		if n := len(f.Requests()); n != 0 {
			t.Errorf("%q reached the controller (%d requests)", tc.args, n)
		}
	}
}

func TestHelpGoesToStdout(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"queue", "--help"}, {"show", "job", "-h"}, {"cancel", "--help"}} {
		r := runCLI("", args...)
		if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "USAGE") {
			t.Errorf("%q: %+v", args, r)
		}
	}
}

func TestReorderArgs(t *testing.T) {
	app := App()
	for _, tc := range []struct{ in, want []string }{
		{[]string{"corral", "queue", "-u", "bob", "--json"}, []string{"corral", "queue", "--user", "bob", "--json"}},
		{[]string{"corral", "cancel", "5", "6", "-u", "bob", "-t", "PD"}, []string{"corral", "cancel", "--user", "bob", "--states", "PD", "5", "6"}},
		{[]string{"corral", "cancel", "5", "-ubob"}, []string{"corral", "cancel", "--user", "bob", "5"}},
		{[]string{"corral", "cancel", "5", "-u=bob", "--state=R"}, []string{"corral", "cancel", "--user=bob", "--states=R", "5"}},
		{[]string{"corral", "cancel", "--", "-5"}, []string{"corral", "cancel", "--", "-5"}},
		{[]string{"corral", "--socket", "/s", "show", "job", "5", "--json"}, []string{"corral", "--socket", "/s", "show", "job", "--json", "5"}},
		{[]string{"corral", "submit", "job.sh", "-c", "4"}, []string{"corral", "submit", "job.sh", "-c", "4"}},
		{[]string{"corral", "submit", "-c", "4", "job.sh"}, []string{"corral", "submit", "-c", "4", "job.sh"}},
		{[]string{"corral", "frob", "queue", "-x"}, []string{"corral", "-x", "frob", "queue"}},
		{[]string{"corral", "queue", "--me", "-t", "R", "-h"}, []string{"corral", "queue", "--me", "--states", "R", "-h"}},
	} {
		if got := reorderArgs(app, tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("reorderArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for _, tc := range []struct {
		in   int64
		want string
	}{
		{0, "0"}, {-1, "0"}, {512, "512B"}, {1024, "1.0K"}, {1536 << 20, "1.5G"}, {4 << 30, "4.0G"}, {3 << 40, "3.0T"}, {300 << 20, "300.0M"},
	} {
		if got := formatSize(tc.in); got != tc.want {
			t.Errorf("formatSize(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/tmp/corral-dev-1/ctld.sock", "/tmp/corral-dev-1/ctld.sock"},
		{"/tmp/my dir/ctld.sock", "'/tmp/my dir/ctld.sock'"},
		{"/tmp/it's", `'/tmp/it'\''s'`},
	} {
		if got := shellQuote(tc.in); got != tc.want {
			t.Errorf("shellQuote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
