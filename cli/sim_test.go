package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runSimCLI runs `corral sim ...` through the real App, registering the sim
// command if App does not have it yet.
func runSimCLI(args ...string) result {
	app := App()
	if findCommand(app.Commands, "sim") == nil {
		cmd := simCommand()
		prepare(cmd, cmd.Name)
		app.Commands = append(app.Commands, cmd)
	}
	var o, e bytes.Buffer
	app.Writer, app.ErrWriter = &o, &e
	code := Run(context.Background(), app, append([]string{"corral", "sim"}, args...))
	return result{o.String(), e.String(), code}
}

// MustSWF writes a trace file and returns its path.
func MustSWF(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.swf")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// threeJobs on 2 processors: job 2 needs both and waits for job 1 (100 s);
// job 3 fits beside job 1 and ends before 100, so backfilling starts it at
// once while FCFS makes it wait for job 2.
const threeJobs = `; MaxProcs: 2
1 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1
2 1 -1 10 2 -1 -1 2 10 -1 1 2 2 -1 -1 -1 -1 -1
3 2 -1 50 1 -1 -1 1 50 -1 1 3 3 -1 -1 -1 -1 -1
`

func TestSimText(t *testing.T) {
	path := MustSWF(t, threeJobs)
	r := runSimCLI("--trace", path, "--policy", "easy")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	// Waits 0, 99, 0: mean 33; bounded slowdowns 1, 10.9, 1.
	for _, want := range []string{"trace", "t.swf", "policy", "easy", "processors", "2", "jobs", "3 (0 trace lines skipped)",
		"makespan", "110 s", "mean 33 s, median 0 s", "max 99 s", "mean 4.30 (tau 10 s)", "over 3 users"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestSimJSONAndPolicies(t *testing.T) {
	path := MustSWF(t, threeJobs)
	maxWait := map[string]int64{"fcfs": 108, "easy": 99, "conservative": 99}
	for policy, want := range maxWait {
		r := runSimCLI("--trace", path, "--policy", policy, "--json")
		if r.code != 0 {
			t.Fatalf("%s: exit %d, %s", policy, r.code, r.stderr)
		}
		var got struct {
			Trace   string
			Policy  string
			Procs   int
			Metrics struct {
				Jobs    int   `json:"jobs"`
				MaxWait int64 `json:"max_wait_s"`
			}
		}
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("%s: %v\n%s", policy, err, r.stdout)
		}
		if got.Policy != policy || got.Procs != 2 || got.Metrics.Jobs != 3 || got.Metrics.MaxWait != want || got.Trace != path {
			t.Errorf("%s: %+v, want max wait %d", policy, got, want)
		}
	}
	r := runSimCLI("--trace", path, "--jobs", "1", "--procs", "4", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"jobs": 1`) || !strings.Contains(r.stdout, `"procs": 4`) ||
		!strings.Contains(r.stdout, `"policy": "default"`) {
		t.Errorf("--jobs 1 --procs 4: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestSimBadInput(t *testing.T) {
	good := MustSWF(t, threeJobs)
	bad := MustSWF(t, "1 2 3\n")
	missing := filepath.Join(t.TempDir(), "nope.swf")
	noSize := MustSWF(t, "1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "corral sim: missing --trace FILE.swf"},
		{[]string{"--trace", good, "extra"}, `corral sim: unexpected argument "extra"`},
		{[]string{"--trace", good, "--policy", "lifo"}, `corral sim: unknown policy "lifo" (valid: fcfs, easy, conservative, default)`},
		{[]string{"--trace", good, "--procs", "0"}, "corral sim: --procs must be at least 1 (got 0)"},
		{[]string{"--trace", good, "--jobs", "-2"}, "corral sim: --jobs must be at least 1 (got -2)"},
		{[]string{"--trace", good, "--procs", "x"}, `corral sim: invalid --procs "x"`},
		{[]string{"--trace", bad}, "corral sim: " + bad + ": line 1: want 18 fields, got 3"},
		{[]string{"--trace", missing}, "corral sim: cannot read trace: open " + missing + ": no such file or directory"},
		{[]string{"--trace", noSize}, "corral sim: " + noSize +
			": the trace does not say how many processors the machine has; give --procs"},
	} {
		r := runSimCLI(tc.args...)
		mustFail(t, r, 2, tc.want)
		if r.stdout != "" {
			t.Errorf("%q printed %q", tc.args, r.stdout)
		}
	}
}
