package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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
	for _, want := range []string{"trace", "t.swf", "policy", "easy", "processors", "2", "jobs", "3 (0 trace lines skipped, 0 cancelled before starting)",
		"makespan", "110 s", "mean 33 s, median 0 s, p95 89 s, p99 97 s, max 99 s", "mean 4.30 (tau 10 s), median 1.00",
		"over 3 users", "worst user 10.90", "0.00% of jobs started later than under easy",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	// Each class has the whole replay's lines over its own jobs: job 2
	// alone is 2-16 wide; nothing is wider.
	for _, want := range []string{
		"width 2-16 jobs 1",
		"width 2-16 wait mean 99 s, median 99 s, p95 99 s, p99 99 s, max 99 s",
		"width 2-16 bounded slowdown mean 10.90 (tau 10 s), median 10.90, p95 10.90, p99 10.90, max 10.90",
		"width 2-16 fairness Jain 1.000 over 1 user's mean bounded slowdown (worst user 10.90)",
		"width >16 jobs 0",
		"length <1h fairness Jain 0.459 over 3 users' mean bounded slowdown (worst user 10.90)",
	} {
		if !slices.Contains(squeezedLines(r.stdout), want) {
			t.Errorf("output lacks the line %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "width >16 wait") {
		t.Errorf("an empty class has figures:\n%s", r.stdout)
	}
}

// squeezedLines are out's lines with every run of spaces made one.
func squeezedLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return lines
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
	conf := MustSWF(t, "SchedulerParameters=bf_interval=60\n")
	badConf := MustSWF(t, "PriorityType=priority/multifactor\nPriorityWeightAge=x\n")
	siteConf := MustSWF(t, "PartitionName=batch Nodes=ALL Default=YES\nBackfillMode=conservative\n")
	badSite := MustSWF(t, "PartitionName=batch Nodes=ALL Default=YES\nBackfillPackFill=YES\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "corral sim: missing --trace FILE.swf"},
		{[]string{"--trace", good, "extra"}, `corral sim: unexpected argument "extra"`},
		{[]string{"--trace", good, "--policy", "lifo"}, `corral sim: unknown policy "lifo" (valid: fcfs, easy, conservative, slurm, default)`},
		{[]string{"--trace", good, "--procs", "0"}, "corral sim: --procs must be at least 1 (got 0)"},
		{[]string{"--trace", good, "--jobs", "-2"}, "corral sim: --jobs must be at least 1 (got -2)"},
		{[]string{"--trace", good, "--procs", "x"}, `corral sim: invalid --procs "x"`},
		{[]string{"--trace", bad}, "corral sim: " + bad + ": line 1: want 18 fields, got 3"},
		{[]string{"--trace", missing}, "corral sim: cannot read trace: open " + missing + ": no such file or directory"},
		{[]string{"--trace", noSize}, "corral sim: " + noSize +
			": the trace does not say how many processors the machine has; give --procs"},
		{[]string{"--trace", good, "--policy", "easy", "--compare", "easy,slurm"}, "corral sim: give --policy or --compare, not both"},
		{[]string{"--trace", good, "--compare", "easy,,slurm"}, `corral sim: --compare: empty policy name in "easy,,slurm"`},
		{[]string{"--trace", good, "--compare", "easy,easy"}, `corral sim: --compare: policy easy named twice in "easy,easy"`},
		{[]string{"--trace", good, "--shake", "1"}, "corral sim: --shake must be at least 2 replays (got 1)"},
		{[]string{"--trace", good, "--seed", "3"}, "corral sim: --jitter and --seed go with --shake N"},
		{[]string{"--trace", good, "--shake", "2", "--jitter", "0"}, "corral sim: --jitter must be at least 1 second (got 0)"},
		{[]string{"--trace", good, "--slurm-conf", conf}, "corral sim: --slurm-conf is for the slurm policy: add it to --policy or --compare"},
		{[]string{"--trace", good, "--policy", "slurm", "--slurm-conf", badConf}, "corral sim: " + badConf +
			`: line 2: PriorityWeightAge: "x" is not a weight (a whole number, 0 or more)`},
		{[]string{"--trace", good, "--policy", "slurm", "--slurm-conf", missing}, "corral sim: cannot read slurm.conf: open " +
			missing + ": no such file or directory"},
		{[]string{"--trace", good, "--policy", "easy", "--conf", siteConf}, "corral sim: --conf is for the default policy: add it to --policy or --compare"},
		{[]string{"--trace", good, "--conf", badSite}, "corral sim: " + badSite + ":2: BackfillPackFill=YES needs BackfillPack=N, the number of candidates it chooses among"},
		{[]string{"--trace", good, "--conf", missing}, "corral sim: cannot read corral.conf: open " + missing + ": no such file or directory"},
	} {
		r := runSimCLI(tc.args...)
		mustFail(t, r, 2, tc.want)
		if r.stdout != "" {
			t.Errorf("%q printed %q", tc.args, r.stdout)
		}
	}
}

func TestSimCompare(t *testing.T) {
	path := MustSWF(t, threeJobs)
	r := runSimCLI("--trace", path, "--compare", "fcfs,easy,slurm")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	// One column per policy. Max waits 108, 99 and 99: slurm plans with
	// limits in whole minutes, so job 1 holds its processor until 120 and
	// job 2 is reserved from 120; job 3 (a minute from 30 s, its first
	// backfill tick) fits before it and waits 28 s instead of EASY's 0.
	lines := strings.Split(r.stdout, "\n")
	if !strings.HasPrefix(lines[0], "trace t.swf, 2 processors, 3 jobs") || len(strings.Fields(lines[1])) != 4 {
		t.Fatalf("heading:\n%s", r.stdout)
	}
	for _, want := range []string{"metric fcfs easy slurm", "wait max (s) 108 99 99", "width 1: wait max (s) 108 0 28",
		"unfair starts 0.3333 0.0000 0.3333", "width >16: jobs 0 0 0"} {
		found := false
		for _, l := range lines {
			found = found || strings.Join(strings.Fields(l), " ") == want
		}
		if !found {
			t.Errorf("no row with %q:\n%s", want, r.stdout)
		}
	}
	r = runSimCLI("--trace", path, "--compare", "easy,slurm", "--json")
	var got struct {
		Procs   int
		Results []struct {
			Policy  string
			Metrics map[string]any
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got.Results) != 2 || got.Procs != 2 {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if got.Results[1].Policy != "slurm" || got.Results[1].Metrics["max_wait_s"] != 99.0 ||
		got.Results[0].Metrics["unfair_reference"] != "easy" {
		t.Errorf("%+v", got.Results)
	}
}

func TestSimShake(t *testing.T) {
	path := MustSWF(t, threeJobs)
	args := []string{"--trace", path, "--compare", "easy,conservative", "--shake", "4", "--jitter", "5", "--seed", "9", "--json"}
	r := runSimCLI(args...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var got struct {
		Replays  int
		Jitter   int64 `json:"jitter_s"`
		Seed     uint64
		Policies []struct {
			Policy  string
			Metrics map[string]struct{ Mean, Stddev, Min, Max float64 }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if got.Replays != 4 || got.Jitter != 5 || got.Seed != 9 || len(got.Policies) != 2 {
		t.Fatalf("%+v", got)
	}
	for _, p := range got.Policies {
		m, ok := p.Metrics["mean_bounded_slowdown"]
		if !ok || m.Min > m.Mean || m.Mean > m.Max || m.Min < 1 {
			t.Errorf("%s: bounded slowdown spread %+v", p.Policy, m)
		}
	}
	if again := runSimCLI(args...); again.stdout != r.stdout {
		t.Errorf("the same seed printed two results:\n%s\n%s", r.stdout, again.stdout)
	}
	text := runSimCLI("--trace", path, "--shake", "3", "--policy", "slurm")
	if text.code != 0 || !strings.Contains(text.stdout, "3 replays with submit times jittered by up to 60 s (seed 1)") ||
		!strings.Contains(text.stdout, "bsld mean") || !strings.Contains(text.stdout, " ± ") {
		t.Errorf("exit %d:\n%s%s", text.code, text.stdout, text.stderr)
	}
}

// --conf replays the default policy with a site's corral.conf: with
// PriorityType=basic and BackfillMode=conservative it is the
// conservative policy, column for column.
func TestSimSiteConf(t *testing.T) {
	// 60 jobs of three users on 8 processors, arriving faster than they
	// run, so that backfilling has choices to make.
	var trace strings.Builder
	trace.WriteString("; MaxProcs: 8\n")
	for i := range 60 {
		procs, run := 1+(i*5)%8, 30+(i*37)%300
		fmt.Fprintf(&trace, "%d %d -1 %d %d -1 -1 %d %d -1 1 %d 1 -1 -1 -1 -1 -1\n", i+1, i*20, run, procs, procs, run*2, 1+i%3)
	}
	path := MustSWF(t, trace.String())
	conf := filepath.Join(t.TempDir(), "corral.conf")
	text := "PartitionName=batch Nodes=ALL Default=YES\nPriorityType=basic BackfillMode=conservative\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runSimCLI("--trace", path, "--compare", "conservative,default", "--conf", conf, "--json")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var got compareOutput
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Results) != 2 {
		t.Fatalf("%d results", len(got.Results))
	}
	if cons, site := got.Results[0].Metrics, got.Results[1].Metrics; !reflect.DeepEqual(cons, site) {
		t.Fatalf("with %s, default's metrics\n%+v\ndiffer from conservative's\n%+v", text, site, cons)
	}
	stock := runSimCLI("--trace", path, "--compare", "conservative,default", "--json")
	var plain compareOutput
	if err := json.Unmarshal([]byte(stock.stdout), &plain); err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(plain.Results[0].Metrics, plain.Results[1].Metrics) {
		t.Fatal("the stock default replays this trace as conservative does: the check proves nothing")
	}
}
