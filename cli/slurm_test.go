package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// slurm runs the Slurm command name against this fake controller.
func (f *fakeCtld) slurm(t *testing.T, stdin, name string, args ...string) result {
	t.Helper()
	t.Setenv(api.SocketEnv, f.socket)
	t.Setenv(api.CtldEnv, "")
	var o, e bytes.Buffer
	code := RunSlurm(context.Background(), name, args, strings.NewReader(stdin), &o, &e)
	return result{o.String(), e.String(), code}
}

func TestSlurmNames(t *testing.T) {
	want := []string{"sacct", "sacctmgr", "salloc", "sbatch", "scancel", "scontrol", "sinfo", "sprio", "squeue", "srun", "sshare", "sstat"}
	got := SlurmNames()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("SlurmNames() = %v, want %v", got, want)
	}
	if IsSlurmName("corral") || IsSlurmName("queue") || !IsSlurmName("squeue") {
		t.Error("IsSlurmName answers wrongly")
	}
}

func TestSlurmOptionErrors(t *testing.T) {
	f := MustFakeCtld(t)
	for _, tc := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"squeue", []string{"--foo"}, "squeue: unrecognized option '--foo'\nTry \"squeue --help\" for more information\n"},
		{"squeue", []string{"-hz"}, "squeue: invalid option -- 'z'\nTry \"squeue --help\" for more information\n"},
		{"squeue", []string{"-o"}, "squeue: option requires an argument -- 'o'\nTry \"squeue --help\" for more information\n"},
		{"squeue", []string{"extra"}, "squeue: error: Unrecognized option: extra\nTry \"squeue --help\" for more information\n"},
		{"scancel", nil, "scancel: error: No job identification provided\n"},
		{"scancel", []string{"1-5"}, "scancel: error: Invalid job id 1-5\n"}, // as Slurm 22.05 printed it
		{"scancel", []string{"-s", "USR3", "12"}, "Unknown job signal: USR3\n"},
		{"scancel", []string{"-i", "12"}, "scancel: error: --interactive is not supported by corral: interactive confirmation is not supported\n"},
		{"scontrol", []string{"frobnicate"}, "scontrol: error: invalid command: frobnicate (corral's scontrol answers show, hold, release, requeue, suspend, resume, update, wait_job, ping and version)\n"},
		{"salloc", []string{"--wrap", "true"}, "salloc: error: --wrap is for batch scripts: give the command itself after the options\nTry \"salloc --help\" for more information\n"},
	} {
		r := f.slurm(t, "", tc.name, tc.args...)
		if r.code != 1 || r.stderr != tc.stderr || r.stdout != "" {
			t.Errorf("%s %q: exit %d, stdout %q, stderr %q; want exit 1, stderr %q", tc.name, tc.args, r.code, r.stdout, r.stderr, tc.stderr)
		}
	}
	if n := len(f.Requests()); n != 0 {
		t.Errorf("bad command lines reached the controller %d times", n)
	}
}

func TestSlurmVersion(t *testing.T) {
	f := MustFakeCtld(t)
	for _, name := range []string{"squeue", "scancel", "salloc"} {
		r := f.slurm(t, "", name, "--version")
		if r.code != 0 || !strings.HasPrefix(r.stdout, "slurm "+SlurmVersion+" ") {
			t.Errorf("%s --version: exit %d, %q", name, r.code, r.stdout)
		}
	}
}

func TestSqueueFormats(t *testing.T) {
	f := MustFakeCtld(t)
	f.jobs = fixtureJobs(time.Now())[:3]
	r := f.slurm(t, "", "squeue", "-h", "-o", "%i %t", "-S", "i")
	if want := "3 R\n11 PD\n12 PD\n"; r.code != 0 || r.stdout != want {
		t.Errorf("squeue -h -o '%%i %%t': exit %d stdout %q stderr %q, want %q", r.code, r.stdout, r.stderr, want)
	}
	if q := f.Requests()[0].Query; q.Get("view") != "brief" {
		t.Errorf("squeue -o '%%i %%t' -S i asked for view %q, want brief", q.Get("view"))
	}
	// The default layout, in Slurm's default order (partition, state,
	// priority): batch's pending jobs, then gpu's running one.
	r = f.slurm(t, "", "squeue")
	want := "" +
		"             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n" +
		"                11     batch      x?y      bob PD       0:00      1 (None)\n" +
		"                12     batch     eval      bob PD       0:00      2 (Priority)\n" +
		"                 3       gpu train bi    alice  R    1:01:0X      2 dev[1-2]\n"
	// The running job's time is 1:01:05 plus however long the run took.
	if got := regexp.MustCompile(`1:01:\d\d`).ReplaceAllString(r.stdout, "1:01:0X"); r.code != 0 || got != want {
		t.Errorf("squeue:\n%s(stderr %q)\nwant:\n%s", r.stdout, r.stderr, want)
	}
	// The brief view has the priority the default order sorts by.
	if reqs := f.Requests(); reqs[len(reqs)-1].Query.Get("view") != "brief" {
		t.Errorf("squeue asked for view %q, want brief", reqs[len(reqs)-1].Query.Get("view"))
	}
	for _, args := range [][]string{{"-h", "-o", "%i", "-j", "12,3"}, {"-h", "-o%i", "-j12,3"}, {"-ho", "%i", "--jobs=12,3"}} {
		r = f.slurm(t, "", "squeue", args...)
		reqs := f.Requests()
		if r.code != 0 || reqs[len(reqs)-1].Query["id"] == nil || strings.Join(reqs[len(reqs)-1].Query["id"], ",") != "12,3" {
			t.Errorf("squeue %q: exit %d %q, asked %v", args, r.code, r.stderr, reqs[len(reqs)-1].Query)
		}
	}
	if r := f.slurm(t, "", "squeue", "-h", "12"); r.code != 1 || !strings.Contains(r.stderr, "Unrecognized option: 12") {
		t.Errorf("squeue 12 without -j: exit %d %q", r.code, r.stderr)
	}
	r = f.slurm(t, "", "squeue", "--noheader", "--Format=JobID:4,Name:.10,Bogus", "-p", "gpu")
	if r.code != 0 || r.stdout != "3    train big\n" || r.stderr != "squeue: error: Invalid job format specification: Bogus\n" {
		t.Errorf("squeue -O: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestScontrolHostnames(t *testing.T) {
	f := MustFakeCtld(t)
	r := f.slurm(t, "", "scontrol", "show", "hostnames", "dev[1-3],gpu[08-10]")
	if r.code != 0 || r.stdout != "dev1\ndev2\ndev3\ngpu08\ngpu09\ngpu10\n" {
		t.Errorf("show hostnames: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	t.Setenv("SLURM_JOB_NODELIST", "a[01-02]b")
	var o, e bytes.Buffer
	if code := RunSlurm(context.Background(), "scontrol", []string{"show", "hostnames"}, nil, &o, &e); code != 0 || o.String() != "a01b\na02b\n" {
		t.Errorf("show hostnames from SLURM_JOB_NODELIST: exit %d %q %q", code, o.String(), e.String())
	}
	r = f.slurm(t, "", "scontrol", "show", "hostlist", "dev3,dev1,dev2,gpu1")
	if r.code != 0 || r.stdout != "dev[1-3],gpu1\n" {
		t.Errorf("show hostlist: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = f.slurm(t, "", "scontrol", "show", "hostnames", "dev[3-1]")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "scontrol: error: ") {
		t.Errorf("a backwards range: exit %d %q", r.code, r.stderr)
	}
}

// scontrol show takes an entity's name shortened, as Slurm's scontrol
// does (each needs the letters Slurm asks for): `scontrol show hostname
// $SLURM_JOB_NODELIST` is how many a training script finds its first
// node. Reservations, licenses and burst buffers corral has none of.
func TestScontrolShowEntityWords(t *testing.T) {
	f := MustFakeCtld(t)
	f.jobs = fixtureJobs(time.Now())
	f.parts = []api.Partition{{Name: "batch", Default: true, AllNodes: true}}
	for _, c := range []struct {
		args         []string
		code         int
		stdout, errs string
	}{
		{[]string{"show", "hostname", "dev[1-2]"}, 0, "dev1\ndev2\n", ""},
		{[]string{"show", "HOSTN", "dev1"}, 0, "dev1\n", ""},
		{[]string{"show", "hostl", "dev2,dev1"}, 0, "dev[1-2]\n", ""},
		{[]string{"show", "hostlists", "dev2,dev1"}, 0, "dev[1-2]\n", ""},
		{[]string{"show", "host", "dev1"}, 1, "", "invalid entity: host"},
		{[]string{"show", "p"}, 1, "", "invalid entity: p"},
		{[]string{"show", "res"}, 0, "No reservations in the system\n", ""},
		{[]string{"show", "reservation", "maint"}, 1, "Reservation maint not found\n", ""},
		{[]string{"show", "licenses"}, 0, "No licenses configured in Slurm.\n", ""},
		{[]string{"show", "burst"}, 0, "", ""},
	} {
		r := f.slurm(t, "", "scontrol", c.args...)
		if r.code != c.code || r.stdout != c.stdout || !strings.Contains(r.stderr, c.errs) || c.errs == "" && r.stderr != "" {
			t.Errorf("scontrol %q: exit %d %q %q; want %d %q and %q", c.args, r.code, r.stdout, r.stderr, c.code, c.stdout, c.errs)
		}
	}
	for _, word := range []string{"j", "jobid", "JOBS"} {
		if r := f.slurm(t, "", "scontrol", "show", word, "3"); r.code != 0 || !strings.HasPrefix(r.stdout, "JobId=3 ") {
			t.Errorf("scontrol show %s 3: exit %d %q %q", word, r.code, r.stdout, r.stderr)
		}
	}
	for _, word := range []string{"pa", "partitionname"} {
		if r := f.slurm(t, "", "scontrol", "show", word); r.code != 0 || !strings.HasPrefix(r.stdout, "PartitionName=") {
			t.Errorf("scontrol show %s: exit %d %q %q", word, r.code, r.stdout, r.stderr)
		}
	}
}

func TestScontrolShowJob(t *testing.T) {
	f := MustFakeCtld(t)
	f.jobs = fixtureJobs(time.Now())
	r := f.slurm(t, "", "scontrol", "show", "job", "3")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "JobId=3 JobName=train big\n   UserId=") ||
		!strings.Contains(r.stdout, "   NodeList=dev[1-2]\n") || !strings.Contains(r.stdout, "JobState=RUNNING ") {
		t.Errorf("show job 3: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = f.slurm(t, "", "scontrol", "show", "job", "99")
	if r.code != 1 || r.stderr != "slurm_load_jobs error: Invalid job id specified\n" {
		t.Errorf("show job 99: exit %d %q", r.code, r.stderr)
	}
	r = f.slurm(t, "", "scontrol", "-o", "show", "job")
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); r.code != 0 || len(lines) != 4 || !strings.HasPrefix(lines[0], "JobId=1 ") {
		t.Errorf("scontrol -o show job: exit %d\n%s", r.code, r.stdout)
	}
	f.jobs = nil
	if r = f.slurm(t, "", "scontrol", "show", "job"); r.stdout != "No jobs in the system\n" {
		t.Errorf("show job with no jobs: %q", r.stdout)
	}
}

func TestSbatch(t *testing.T) {
	f := MustFakeCtld(t)
	dir := t.TempDir()
	t.Chdir(dir)
	r := f.slurm(t, "", "sbatch", "--parsable", "--wrap", "sleep 30")
	if r.code != 0 || r.stdout != "7\n" {
		t.Fatalf("sbatch --parsable: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = f.slurm(t, "#!/bin/sh\n#SBATCH -J fromstdin\necho hi\n", "sbatch", "-a", "1-2")
	if r.code != 0 || r.stdout != "Submitted batch job 7\n" {
		t.Fatalf("sbatch with the script on stdin: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	reqs := f.Requests()
	var wrap, stdin api.SubmitRequest
	if err := json.Unmarshal(reqs[0].Body, &wrap); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(reqs[1].Body, &stdin); err != nil {
		t.Fatal(err)
	}
	if wrap.Spec.Output != "slurm-%j.out" || stdin.Spec.Output != "slurm-%A_%a.out" || stdin.Spec.Name != "fromstdin" {
		t.Errorf("sbatch defaults: outputs %q and %q, name %q", wrap.Spec.Output, stdin.Spec.Output, stdin.Spec.Name)
	}
	r = f.slurm(t, "", "sbatch", "--bogus-option", "x.sh")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "sbatch: error: ") {
		t.Errorf("sbatch with a bad option: exit %d %q", r.code, r.stderr)
	}
	// corral submit keeps its own default.
	if r := f.run("submit", "--parsable", "--wrap", "true"); r.code != 0 {
		t.Fatalf("corral submit: %+v", r)
	}
	var plain api.SubmitRequest
	reqs = f.Requests()
	if err := json.Unmarshal(reqs[len(reqs)-1].Body, &plain); err != nil || plain.Spec.Output != "corral-%j.out" {
		t.Errorf("corral submit's output %q (%v)", plain.Spec.Output, err)
	}
}

func TestScancel(t *testing.T) {
	f := MustFakeCtld(t)
	f.jobs = fixtureJobs(time.Now())
	r := f.slurm(t, "", "scancel", "12", "12_[1-2]", "-u", "bob")
	if r.code != 0 {
		t.Fatalf("scancel: exit %d %q", r.code, r.stderr)
	}
	var req api.CancelRequest
	if err := json.Unmarshal(f.MustOneRequest(t).Body, &req); err != nil {
		t.Fatal(err)
	}
	if len(req.IDs) != 1 || req.IDs[0] != 12 || len(req.Tasks) != 2 || req.User != "bob" {
		t.Errorf("scancel sent %+v", req)
	}
	// Given IDs alone, Slurm's scancel (22.05 and 26.05) passes over jobs
	// that ended or never were: silent but for -v, exit 0. A filter
	// makes them errors, and another user's job is one either way.
	f.jobs = append(f.jobs, api.Job{ID: 77, Name: "theirs", User: "carol", Partition: "batch", State: api.StateRunning})
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"99"}, 0, ""},
		{[]string{"1", "99"}, 0, ""},
		{[]string{"-Q", "99"}, 0, ""},
		{[]string{"-v", "99"}, 0, "scancel: error: Kill job error on job id 99: job 99 does not exist\n"},
		{[]string{"-u", "bob", "99"}, 1, "scancel: error: Kill job error on job id 99: job 99 does not exist\n"},
		{[]string{"77", "99"}, 1, "scancel: error: Kill job error on job id 77: job 77 belongs to carol\n"},
		{[]string{"-Q", "77"}, 1, ""},
	} {
		if r = f.slurm(t, "", "scancel", tc.args...); r.code != tc.code || r.stderr != tc.stderr {
			t.Errorf("scancel %q: exit %d %q, want %d %q", tc.args, r.code, r.stderr, tc.code, tc.stderr)
		}
	}
	// -p is filtered here: only gpu's job 3 is named to the controller.
	before := len(f.Requests())
	if r = f.slurm(t, "", "scancel", "-p", "gpu"); r.code != 0 {
		t.Fatalf("scancel -p gpu: exit %d %q", r.code, r.stderr)
	}
	reqs := f.Requests()[before:]
	if err := json.Unmarshal(reqs[len(reqs)-1].Body, &req); err != nil {
		t.Fatal(err)
	}
	if len(req.IDs) != 1 || req.IDs[0] != 3 {
		t.Errorf("scancel -p gpu cancelled %+v", req)
	}
}

// TestMakefileLinksEverySlurmName keeps the Makefile's bin/slurm links
// and the names corral answers to the same list.
func TestMakefileLinksEverySlurmName(t *testing.T) {
	data, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "SLURM_CMDS :="); ok {
			got := strings.Fields(rest)
			slices.Sort(got)
			if !slices.Equal(got, SlurmNames()) {
				t.Errorf("Makefile SLURM_CMDS %v, corral answers to %v", got, SlurmNames())
			}
			return
		}
	}
	t.Error("the Makefile has no SLURM_CMDS line")
}

func TestSacct(t *testing.T) {
	f := MustFakeCtld(t)
	now := time.Now()
	jobs := fixtureJobs(now)
	f.jobs = jobs[:3] // 12 and 11 pending, 3 running
	end := now.Add(-time.Minute)
	f.pipe.acct = []api.AcctRecord{{JobID: 2, Name: "old", Partition: "batch", User: "alice", State: api.StateCancelled,
		ExitCode: 0, Signal: 15, SubmitTime: now.Add(-time.Hour), EndTime: end, NodeCount: 1, CPUs: 1}}
	r := f.slurm(t, "", "sacct", "-P", "-n", "-X", "-o", "JobIDRaw,State")
	if want := "2|CANCELLED\n3|RUNNING\n11|PENDING\n12|PENDING\n"; r.code != 0 || r.stdout != want {
		t.Errorf("sacct -P -n -X -o JobIDRaw,State: exit %d %q %q, want %q", r.code, r.stdout, r.stderr, want)
	}
	var acctQuery, jobsQuery string
	for _, req := range f.Requests() {
		switch req.Path {
		case "/v1/acct":
			acctQuery = req.Query.Encode()
		case "/v1/jobs":
			jobsQuery = req.Query.Encode()
		}
	}
	if !strings.Contains(acctQuery, "start=") || strings.Contains(jobsQuery, "all=") || !strings.Contains(jobsQuery, "view=summary") {
		t.Errorf("sacct asked /v1/acct?%s and /v1/jobs?%s: want a start at midnight, and only queued jobs' summaries", acctQuery, jobsQuery)
	}
	r = f.slurm(t, "", "sacct", "-j", "3", "--name", "train big", "-p", "-o", "JobID,Timelimit,NodeList%20")
	if want := "JobID|Timelimit|NodeList|\n3|UNLIMITED|dev[1-2]|\n"; r.code != 0 || r.stdout != want {
		t.Errorf("sacct -j 3 -p: exit %d %q %q, want %q", r.code, r.stdout, r.stderr, want)
	}
	r = f.slurm(t, "", "sacct", "-o", "JobID,Bogus")
	if r.code != 1 || r.stderr != "sacct: error: Invalid field requested: \"Bogus\"\n" {
		t.Errorf("sacct -o Bogus: exit %d %q", r.code, r.stderr)
	}
	r = f.slurm(t, "", "sacct", "-S", "not-a-time")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "sacct: error: invalid --starttime") {
		t.Errorf("sacct -S not-a-time: exit %d %q", r.code, r.stderr)
	}
}

func TestSrunPersonality(t *testing.T) {
	f := MustFakeCtld(t)
	t.Setenv("SLURM_JOB_ID", "")
	t.Setenv("SLURM_JOBID", "")
	r := f.slurm(t, "", "srun", "hostname")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "srun: error: ") {
		t.Errorf("srun outside an allocation: exit %d %q", r.code, r.stderr)
	}
	if r := f.slurm(t, "", "srun", "--bogus"); r.code != 1 || !strings.HasPrefix(r.stderr, "srun: unrecognized option '--bogus'") {
		t.Errorf("srun --bogus: exit %d %q", r.code, r.stderr)
	}
}

func TestSinfo(t *testing.T) {
	f := MustFakeCtld(t)
	f.parts = []api.Partition{{Name: "batch", Default: true, AllNodes: true}, {Name: "gpu", Nodes: []string{"dev2"}, MaxTime: 7200}}
	f.nodes = []api.Node{
		{Name: "dev2", State: api.NodeMixed, CPUs: 4, AllocCPUs: 2, MemBytes: 8 << 30},
		{Name: "dev1", State: api.NodeIdle, CPUs: 4, MemBytes: 8 << 30},
		{Name: "dev3", State: api.NodeDown, CPUs: 4, MemBytes: 8 << 30, Reason: "not responding"},
	}
	r := f.slurm(t, "", "sinfo")
	want := "" +
		"PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n" +
		"batch*       up   infinite      1   idle dev1\n" +
		"batch*       up   infinite      1    mix dev2\n" +
		"batch*       up   infinite      1  down* dev3\n" + // not responding, as Slurm marks it
		"gpu          up    2:00:00      1    mix dev2\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("sinfo: exit %d %q\n%s\nwant:\n%s", r.code, r.stderr, r.stdout, want)
	}
	if r := f.slurm(t, "", "sinfo", "-h", "-o", "%P"); r.stdout != "batch*\ngpu\n" {
		t.Errorf("sinfo -h -o %%P: %q %q", r.stdout, r.stderr)
	}
	if r := f.slurm(t, "", "sinfo", "-h", "-N", "-o", "%N %t", "-t", "idle,mix", "-p", "batch"); r.stdout != "dev1 idle\ndev2 mix\n" {
		t.Errorf("sinfo -N -t idle,mix -p batch: %q %q", r.stdout, r.stderr)
	}
	if r := f.slurm(t, "", "sinfo", "-h", "-N", "-o", "%N %t", "-p", "batch", "-S", "-t"); r.stdout != "dev3 down*\ndev2 mix\ndev1 idle\n" {
		t.Errorf("sinfo -S -t: %q %q", r.stdout, r.stderr)
	}
	if r := f.slurm(t, "", "sinfo", "-i", "0"); r.code != 1 || r.stderr != "sinfo: error: Error: invalid entry for --iterate=0\n" {
		t.Errorf("sinfo -i 0: exit %d %q", r.code, r.stderr)
	}
	// -i reports again every N seconds, each dated, until stopped.
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	var o, e bytes.Buffer
	t.Setenv(api.SocketEnv, f.socket)
	code := RunSlurm(ctx, "sinfo", []string{"-i", "1", "-o", "%P"}, strings.NewReader(""), &o, &e)
	reports := strings.Split(strings.TrimSuffix(o.String(), "\n\n"), "\n\n")
	for _, rep := range reports {
		if lines := strings.Split(rep, "\n"); len(lines) != 4 || !strings.HasSuffix(lines[0], fmt.Sprint(time.Now().Year())) || lines[2] != "batch*" {
			t.Errorf("sinfo -i 1: report %q, want a date, the header, batch* and gpu", rep)
		}
	}
	if code != 0 || len(reports) < 2 {
		t.Errorf("sinfo -i 1 for 2.5 s: exit %d, %d reports %q %q", code, len(reports), o.String(), e.String())
	}
	if r := f.slurm(t, "", "sinfo", "-R", "-h"); r.stdout != "not responding       Unknown   Unknown             dev3\n" {
		t.Errorf("sinfo -R: %q %q", r.stdout, r.stderr)
	}
	// A partition none of whose nodes is listed keeps its line where the
	// partition is shown, as Slurm 22.05's sinfo printed it: 0 nodes,
	// state n/a, no node list (a format without the partition prints
	// nothing for it).
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-t", "idle"}, "" +
			"PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n" +
			"batch*       up   infinite      1   idle dev1\n" +
			"gpu          up    2:00:00      0    n/a \n"},
		{[]string{"-h", "-t", "drain", "-o", "%D"}, ""},
		{[]string{"-h", "-t", "drain", "-o", "%P %D %t %T %N %C %F %A %c %m %z %E"}, "" +
			"batch* 0 n/a n/a  0/0/0/0 0/0/0/0 0/0 0 0 0:0:0 none\n" +
			"gpu 0 n/a n/a  0/0/0/0 0/0/0/0 0/0 0 0 0:0:0 none\n"},
		{[]string{"-h", "-t", "idle", "-p", "gpu", "-o", "%D"}, ""},
		{[]string{"-h", "-t", "idle", "-p", "gpu", "-O", "Partition,Nodes"}, "gpu                 0                   \n"},
		{[]string{"-h", "-n", "nosuch", "-s"}, "" +
			"batch*       up   infinite          0/0/0/0 \n" +
			"gpu          up    2:00:00          0/0/0/0 \n"},
		{[]string{"-h", "-N", "-t", "drain"}, ""},
		{[]string{"-h", "-R", "-o", "%P %E"}, "batch* not responding\n"},
	} {
		r := f.slurm(t, "", "sinfo", c.args...)
		if r.code != 0 || r.stdout != c.want {
			t.Errorf("sinfo %v: exit %d %q\n%q\nwant:\n%q", c.args, r.code, r.stderr, r.stdout, c.want)
		}
	}
}

func TestSprioSshare(t *testing.T) {
	f := MustFakeCtld(t)
	f.prio = api.PrioResponse{Weights: api.PrioWeights{Age: 1000, JobSize: 0, Fairshare: 10000}, Jobs: []api.JobPrio{
		{JobID: 5, Job: "5", Partition: "batch", User: "bob", Account: "ml", Priority: 5500, Nice: 0,
			Age: api.PrioFactor{Value: 0.5, Weight: 1000, Part: 500}, Fairshare: api.PrioFactor{Value: 0.5, Weight: 10000, Part: 5000}},
		{JobID: 4, Job: "4", Partition: "gpu", User: "al", Account: "ml", Priority: 100,
			Age: api.PrioFactor{Value: 0.1, Weight: 1000, Part: 100}},
	}}
	r := f.slurm(t, "", "sprio")
	want := "" +
		"          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE\n" +
		"              4 gpu              100          0        100          0\n" +
		"              5 batch           5500          0        500       5000\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("sprio:\n%s%s\nwant:\n%s", r.stdout, r.stderr, want)
	}
	// -l and -n as Slurm 22.05 laid them out (scripts/slurm-diff.sh).
	if r := f.slurm(t, "", "sprio", "-l", "-p", "batch"); r.stdout != ""+
		"          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC  FAIRSHARE    JOBSIZE  PARTITION        QOS        NICE                 TRES\n"+
		"              5 batch          bob       5500          0        500          0       5000          0          0          0           0                     \n" {
		t.Errorf("sprio -l:\n%s%s", r.stdout, r.stderr)
	}
	if r := f.slurm(t, "", "sprio", "-n", "-p", "batch"); r.stdout != ""+
		"          JOBID PARTITION PRIORITY   AGE        FAIRSHARE \n"+
		"              5 batch     0.00000128 0.5000000  0.5000000 \n" {
		t.Errorf("sprio -n:\n%q%s", r.stdout, r.stderr)
	}
	if r := f.slurm(t, "", "sprio", "-h", "-o", "%i %u %f", "-p", "batch"); r.stdout != "5 bob 0.5000000\n" {
		t.Errorf("sprio -h -o: %q %q", r.stdout, r.stderr)
	}
	if r := f.slurm(t, "", "sprio", "-w"); !strings.HasSuffix(r.stdout, "        Weights                                       1000      10000\n") {
		t.Errorf("sprio -w: %q", r.stdout)
	}
	fs := 0.25
	f.share = api.ShareResponse{Rows: []api.ShareRow{
		{Account: "root", NormShares: 1, RawUsage: 100, EffectvUsage: 1},
		{Account: "ml", Depth: 1, RawShares: 1, NormShares: 1, RawUsage: 100, EffectvUsage: 1},
		{Account: "ml", User: "bob", Depth: 1, RawShares: 1, NormShares: 1, RawUsage: 100, EffectvUsage: 1, FairShare: &fs},
	}}
	r = f.slurm(t, "", "sshare", "-P", "-n", "-U")
	if r.code != 0 || r.stdout != " ml|bob|1|1.000000|100|1.000000|0.250000\n" {
		t.Errorf("sshare -P -n -U: %q %q", r.stdout, r.stderr)
	}
	r = f.slurm(t, "", "sshare", "-o", "Account,FairShare%8")
	want = "" +
		"Account              FairShar \n" +
		"-------------------- -------- \n" +
		"root                          \n" +
		" ml                           \n" +
		" ml                  0.250000 \n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("sshare -o:\n%s%s\nwant:\n%s", r.stdout, r.stderr, want)
	}
}

func TestSqueueSteps(t *testing.T) {
	f := MustFakeCtld(t)
	f.jobs = fixtureJobs(time.Now())[:3]
	start := time.Now().Add(-65 * time.Second)
	f.jobs[1].Steps = []api.Step{{JobID: 3, StepID: 0, Name: "hostname", State: api.StateRunning, Nodes: []string{"dev1"}, Tasks: 2, Start: start},
		{JobID: 3, StepID: 1, Name: "train", State: api.StateRunning, Nodes: []string{"dev1", "dev2"}, Tasks: 4, Start: start}}
	r := f.slurm(t, "", "squeue", "-s")
	if lines := strings.Split(r.stdout, "\n"); r.code != 0 || len(lines) != 4 || lines[0] != "         STEPID     NAME PARTITION     USER      TIME NODELIST" {
		t.Errorf("squeue -s:\n%s%s", r.stdout, r.stderr)
	}
	// The jobs with steps, finished ones whose steps still wait included,
	// not only the running ones (ctld's steps=1).
	if reqs := f.Requests(); len(reqs) == 0 || reqs[0].Path != "/v1/jobs" || reqs[0].Query.Get("steps") != "1" || reqs[0].Query.Has("state") {
		t.Errorf("squeue -s asked %+v first, want GET /v1/jobs?steps=1", reqs)
	}
	r = f.slurm(t, "", "squeue", "-s", "-o", "%.6i %8j %P %u %N")
	want := "" +
		"STEPID NAME     PARTITION USER NODELIST\n" +
		"   3.0 hostname gpu alice dev1\n" +
		"   3.1 train    gpu alice dev[1-2]\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("squeue -s -o:\n%s%s\nwant:\n%s", r.stdout, r.stderr, want)
	}
	if r := f.slurm(t, "", "squeue", "-h", "-o", "%i %A", "-s", "3.1"); r.stdout != "3.1 4\n" {
		t.Errorf("squeue -h -o '%%i %%A' -s 3.1: %q %q", r.stdout, r.stderr)
	}
}

func TestScontrolShowStep(t *testing.T) {
	f := MustFakeCtld(t)
	f.jobs = fixtureJobs(time.Now())[1:2] // job 3, running
	if r := f.slurm(t, "", "scontrol", "show", "step"); r.code != 0 || r.stdout != "No job steps in the system\n" {
		t.Errorf("show step without steps: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	f.jobs[0].Steps = []api.Step{{JobID: 3, StepID: 0, Name: "a", State: api.StateRunning, Nodes: []string{"dev1"}, Tasks: 1},
		{JobID: 3, StepID: 1, Name: "b", State: api.StateRunning, Nodes: []string{"dev2"}, Tasks: 2}}
	r := f.slurm(t, "", "scontrol", "-o", "show", "step", "3.1")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "StepId=3.1 UserId=") || strings.Count(r.stdout, "\n") != 1 || !strings.Contains(r.stdout, " Name=b ") {
		t.Errorf("scontrol -o show step 3.1: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := f.slurm(t, "", "scontrol", "show", "step", "3"); strings.Count(r.stdout, "StepId=") != 2 || !strings.Contains(r.stdout, "\n\nStepId=3.1 ") {
		t.Errorf("scontrol show step 3: %q", r.stdout)
	}
	if r := f.slurm(t, "", "scontrol", "show", "step", "3.7"); r.code != 1 || r.stderr != "scontrol: error: Invalid job id specified\n" {
		t.Errorf("scontrol show step 3.7: exit %d %q", r.code, r.stderr)
	}
}

func TestScontrolUpdateNodes(t *testing.T) {
	f := MustFakeCtld(t)
	r := f.slurm(t, "", "scontrol", "update", "NodeName=dev[1-2]", "State=DRAIN", "Reason=new disks")
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("update State=DRAIN: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	var req api.DrainRequest
	reqs := f.Requests()
	if err := json.Unmarshal(reqs[0].Body, &req); err != nil || reqs[0].Path != "/v1/nodes/drain" || req.Reason != "new disks" || req.Nodes[0] != "dev[1-2]" {
		t.Errorf("update State=DRAIN sent %s %+v (%v)", reqs[0].Path, req, err)
	}
	if r := f.slurm(t, "", "scontrol", "update", "nodename=dev1", "state=resume"); r.code != 0 || f.Requests()[1].Path != "/v1/nodes/resume" {
		t.Errorf("update state=resume: exit %d %q, %s", r.code, r.stderr, f.Requests()[1].Path)
	}
	r = f.slurm(t, "", "scontrol", "update", "NodeName=dev1", "State=DOWN")
	if r.code != 1 || r.stderr != "scontrol: error: You must specify a reason when DOWNING or DRAINING a node. Request denied\n" {
		t.Errorf("update State=DOWN without a reason: exit %d %q", r.code, r.stderr)
	}
	if r := f.slurm(t, "", "scontrol", "update", "NodeName=nope", "State=DRAIN", "Reason=x"); r.code != 1 || !strings.Contains(r.stderr, "no node nope") {
		t.Errorf("update of an unknown node: exit %d %q", r.code, r.stderr)
	}
	if n := len(f.Requests()); n != 3 {
		t.Errorf("%d requests, want 3 (none for the refused one)", n)
	}
}

func TestScontrolJobControl(t *testing.T) {
	f := MustFakeCtld(t)
	if r := f.slurm(t, "", "scontrol", "requeuehold", "5,6_2"); r.code != 0 {
		t.Fatalf("requeuehold: exit %d %q", r.code, r.stderr)
	}
	reqs := f.Requests()
	if len(reqs) != 2 || reqs[0].Path != "/v1/jobs/requeue" || reqs[1].Path != "/v1/jobs/hold" {
		t.Fatalf("requeuehold sent %+v", reqs)
	}
	var req api.JobsRequest
	if err := json.Unmarshal(reqs[1].Body, &req); err != nil || len(req.IDs) != 1 || req.IDs[0] != 5 || len(req.Tasks) != 1 || req.Tasks[0].Task != 2 {
		t.Errorf("hold sent %+v (%v)", req, err)
	}
	f.pipe.control = api.JobsResponse{Errors: map[string]string{"5": "job 5 is not pending"}, ErrorCount: 1}
	if r := f.slurm(t, "", "scontrol", "hold", "5"); r.code != 1 || r.stderr != "scontrol: error: job 5: job 5 is not pending\n" {
		t.Errorf("a refused hold: exit %d %q", r.code, r.stderr)
	}
	if r := f.slurm(t, "", "scontrol", "-Q", "release", "5"); r.code != 1 || r.stderr != "" {
		t.Errorf("scontrol -Q release: exit %d %q", r.code, r.stderr)
	}
	// suspend and resume go the same way and print a refusal as Slurm's scontrol.
	f.pipe.control = api.JobsResponse{Errors: map[string]string{"5": "Job is not suspended"}, ErrorCount: 1}
	if r := f.slurm(t, "", "scontrol", "resume", "5"); r.code != 1 || r.stderr != "Job is not suspended for job 5\n" {
		t.Errorf("a refused resume: exit %d %q", r.code, r.stderr)
	}
	f.pipe.control = api.JobsResponse{Done: []string{"5", "6"}}
	if r := f.slurm(t, "", "scontrol", "suspend", "5,6"); r.code != 0 || r.stderr != "" {
		t.Errorf("scontrol suspend 5,6: exit %d %q", r.code, r.stderr)
	}
	reqs = f.Requests()
	if last := reqs[len(reqs)-1]; last.Path != "/v1/jobs/suspend" || string(last.Body) != `{"ids":[5,6]}` {
		t.Errorf("scontrol suspend sent %s %s", last.Path, last.Body)
	}
}

func TestSlurmHelp(t *testing.T) {
	f := MustFakeCtld(t)
	for _, tc := range []struct {
		name string
		args []string
	}{{"squeue", []string{"--help"}}, {"sacct", []string{"-h"}}, {"scontrol", []string{"-h"}}, {"sshare", []string{"--he"}}, {"sinfo", []string{"--usage"}}} {
		r := f.slurm(t, "", tc.name, tc.args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "Usage: "+tc.name+" ") {
			t.Errorf("%s %q: exit %d %q %q", tc.name, tc.args, r.code, r.stdout, r.stderr)
		}
	}
	if n := len(f.Requests()); n != 0 {
		t.Errorf("help asked the controller %d times", n)
	}
}

func TestSqueueOptions(t *testing.T) {
	f := MustFakeCtld(t)
	now := time.Now()
	f.jobs = fixtureJobs(now)[:3]
	planned := now.Add(time.Hour).Truncate(time.Second)
	f.jobs[0].PlannedStart, f.jobs[0].PlannedNodes = &planned, []string{"dev1", "dev2"}
	r := f.slurm(t, "", "squeue", "--start", "-h")
	want := fmt.Sprintf("%18s %9s %8s %8s %2s %19s %6s %-20s %s\n", "12", "batch", "eval", "bob", "PD", planned.Format("2006-01-02T15:04:05"), "2", "dev[1-2]", "(Priority)") +
		fmt.Sprintf("%18s %9s %8s %8s %2s %19s %6s %-20s %s\n", "11", "batch", "x?y", "bob", "PD", "N/A", "1", "(null)", "(None)")
	if r.code != 0 || r.stdout != want {
		t.Errorf("squeue --start -h:\n%q\nwant:\n%q (%s)", r.stdout, want, r.stderr)
	}
	before := len(f.Requests())
	r = f.slurm(t, "", "squeue", "-u", "bob,alice", "-t", "PD,r", "-h", "-o", "%i")
	q := f.Requests()[before].Query
	if r.code != 0 || strings.Join(q["user"], ",") != "bob,alice" || strings.Join(q["state"], ",") != "PENDING,RUNNING" || q.Get("all") != "" {
		t.Errorf("squeue -u bob,alice -t PD,r asked %v (exit %d %q)", q, r.code, r.stderr)
	}
	if r := f.slurm(t, "", "squeue", "-t", "BOGUS"); r.code != 1 || !strings.HasPrefix(r.stderr, "squeue: error: Invalid job state specified: BOGUS\nsqueue: error: Valid job states include: pending,running,") {
		t.Errorf("squeue -t BOGUS: exit %d %q", r.code, r.stderr)
	}
	t.Setenv("SQUEUE_FORMAT", "%i:%u")
	if r := f.slurm(t, "", "squeue", "-h", "-S", "-i"); r.stdout != "12:bob\n11:bob\n3:alice\n" {
		t.Errorf("SQUEUE_FORMAT with -S -i: %q %q", r.stdout, r.stderr)
	}
	if r := f.slurm(t, "", "squeue", "-h", "-S", "z"); r.code != 1 || r.stderr != "squeue: error: Invalid sort specification: z\n" {
		t.Errorf("-S z: exit %d %q", r.code, r.stderr)
	}
}

// TestSlurmNotFound: what Slurm 22.05 printed for a job, node or
// partition that does not exist (scripts/slurm-diff.sh): pipeline
// engines read squeue's and scontrol's line as "the job is gone".
func TestSlurmNotFound(t *testing.T) {
	f := MustFakeCtld(t)
	f.jobs = fixtureJobs(time.Now())
	for _, tc := range []struct {
		args           []string
		stdout, stderr string
	}{
		{[]string{"squeue", "-j", "99"}, "", "slurm_load_jobs error: Invalid job id specified\n"},
		{[]string{"squeue", "-h", "-j", "99", "-o", "%i"}, "", "slurm_load_jobs error: Invalid job id specified\n"},
		{[]string{"scontrol", "show", "job", "99"}, "", "slurm_load_jobs error: Invalid job id specified\n"},
		{[]string{"scontrol", "show", "node", "nosuch"}, "Node nosuch not found\n", ""},
		{[]string{"scontrol", "show", "partition", "nosuch"}, "Partition nosuch not found\n", ""},
	} {
		r := f.slurm(t, "", tc.args[0], tc.args[1:]...)
		if r.code != 1 || r.stdout != tc.stdout || r.stderr != tc.stderr {
			t.Errorf("%v: exit %d stdout %q stderr %q; want exit 1, %q, %q", tc.args, r.code, r.stdout, r.stderr, tc.stdout, tc.stderr)
		}
	}
	// Two IDs, one unknown: the known one, no error.
	if r := f.slurm(t, "", "squeue", "-h", "-j", "3,99", "-o", "%i"); r.code != 0 || r.stdout != "3\n" {
		t.Errorf("squeue -j 3,99: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// squeue shows finished jobs as Slurm 22.05's did on a loopback cluster:
// a job named with -j that has finished is not listed unless -t asks for
// its state (header only, exit 0: `while [ -n "$(squeue -h -j $id)" ]`
// ends when the job does), and finished jobs are known for
// slurmMinJobAge after their end, not for ever: a job that ended long
// ago is an invalid job ID, and `squeue -t all` (which Nextflow polls)
// lists the recent ones only, the controller leaving out the others.
func TestSqueueFinishedJobs(t *testing.T) {
	f := MustFakeCtld(t)
	now := time.Now()
	f.jobs = fixtureJobs(now) // job 1 ended in 2025
	ended := now.Add(-time.Minute)
	f.jobs = append(f.jobs, api.Job{ID: 20, Name: "recent", User: "alice", Partition: "batch", State: api.StateFailed,
		CPUs: 1, SubmitTime: now.Add(-2 * time.Minute), StartTime: &ended, EndTime: &ended})
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"-h", "-j", "20"}, 0, "", ""},
		{[]string{"-j", "20"}, 0, "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n", ""},
		{[]string{"-h", "-j", "20", "-t", "all", "-o", "%i %t"}, 0, "20 F\n", ""},
		{[]string{"-h", "-j", "20", "-t", "F", "-o", "%i %t"}, 0, "20 F\n", ""},
		{[]string{"-h", "-j", "3,20", "-o", "%i"}, 0, "3\n", ""},
		{[]string{"-h", "-j", "1"}, 1, "", "slurm_load_jobs error: Invalid job id specified\n"},
		{[]string{"-h", "-t", "all", "-o", "%i", "-S", "i"}, 0, "3\n11\n12\n20\n", ""},
	} {
		r := f.slurm(t, "", "squeue", tc.args...)
		if r.code != tc.code || r.stdout != tc.stdout || r.stderr != tc.stderr {
			t.Errorf("squeue %q: exit %d %q %q; want %d %q %q", tc.args, r.code, r.stdout, r.stderr, tc.code, tc.stdout, tc.stderr)
		}
	}
	for _, tc := range []struct {
		args  []string
		since bool
	}{{[]string{"-h"}, false}, {[]string{"-h", "-t", "all"}, true}, {[]string{"-h", "-t", "CD"}, true}, {[]string{"-h", "-t", "R"}, false}} {
		f.slurm(t, "", "squeue", tc.args...)
		reqs := f.Requests()
		v := reqs[len(reqs)-1].Query.Get("ended_since")
		if at, err := time.Parse(time.RFC3339Nano, v); tc.since != (v != "") || tc.since && (err != nil || now.Sub(at) < slurmMinJobAge-time.Minute) {
			t.Errorf("squeue %q asked ended_since=%q", tc.args, v)
		}
	}
}

// TestScontrolShowArray: scontrol show job of an array's ID shows every
// task's record, as Slurm 22.05 did (scripts/slurm-diff.sh); of one task,
// that task's.
func TestScontrolShowArray(t *testing.T) {
	f := MustFakeCtld(t)
	zero := 0
	f.jobs = []api.Job{
		{ID: 20, ArrayJobID: 20, ArrayTaskID: &zero, Name: "arr", User: "bob", Partition: "batch", State: api.StateRunning, Nodes: []string{"dev1"}},
		{ID: 21, ArrayJobID: 20, ArrayTasks: "1-3", Name: "arr", User: "bob", Partition: "batch", State: api.StatePending},
		{ID: 24, Name: "other", User: "bob", Partition: "batch", State: api.StatePending},
	}
	r := f.slurm(t, "", "scontrol", "-o", "show", "job", "20")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "JobId=20 ArrayJobId=20 ArrayTaskId=0 ") ||
		!strings.HasPrefix(lines[1], "JobId=21 ArrayJobId=20 ArrayTaskId=1-3 ") {
		t.Errorf("scontrol -o show job 20: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := f.slurm(t, "", "scontrol", "-o", "show", "job", "24"); r.code != 0 || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("scontrol -o show job 24: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// squeue -t takes every state Slurm names: CG and CF are flags on a job
// of another state, matched as Slurm matches them (R still lists a
// configuring job, CD a completing one that ended COMPLETED), and the
// states corral never has match nothing.
func TestSqueueStateFlags(t *testing.T) {
	f := MustFakeCtld(t)
	now := time.Now()
	jobs := fixtureJobs(now) // 12 and 11 pending, 3 running, 1 completed
	jobs[3].Completing = true
	configuring := jobs[2]
	configuring.ID, configuring.State, configuring.Reason = 20, api.StateRunning, api.ReasonImagePull
	f.jobs = append(jobs, configuring)
	for _, c := range []struct {
		states, want string
		query        map[string]string
	}{
		{"CG", "1 CG\n", map[string]string{"completing": "1", "state": "", "all": ""}},
		{"completing,PD", "11 PD\n12 PD\n1 CG\n", map[string]string{"completing": "1", "state": "PENDING"}},
		{"CF", "20 CF\n", map[string]string{"state": "RUNNING", "completing": ""}},
		{"R", "3 R\n20 CF\n", map[string]string{"state": "RUNNING"}},
		{"CD", "1 CG\n", map[string]string{"state": "COMPLETED", "all": "1"}},
		{"PR,BF,rq,STOPPED", "", nil},
	} {
		before := len(f.Requests())
		r := f.slurm(t, "", "squeue", "-h", "-t", c.states, "-o", "%i %t", "-S", "t,i")
		if r.code != 0 || r.stdout != c.want {
			t.Errorf("squeue -t %s: exit %d\n%q\nwant %q (%s)", c.states, r.code, r.stdout, c.want, r.stderr)
		}
		if len(f.Requests()) == before {
			t.Fatalf("squeue -t %s asked nothing", c.states)
		}
		q := f.Requests()[before].Query
		for k, v := range c.query {
			if got := strings.Join(q[k], ","); got != v {
				t.Errorf("squeue -t %s asked %s=%q, want %q (%v)", c.states, k, got, v, q)
			}
		}
	}
}

// -M/--clusters names corral's one cluster (or all) and changes nothing
// listed; squeue, sinfo and sshare print Slurm's CLUSTER line first (not
// squeue's and sinfo's with -h); another cluster is Slurm's error.
func TestClustersOption(t *testing.T) {
	f := MustFakeCtld(t)
	f.jobs = fixtureJobs(time.Now())
	f.parts = []api.Partition{{Name: "batch", Default: true, AllNodes: true}}
	f.nodes = []api.Node{{Name: "dev1", State: api.NodeIdle, CPUs: 4, MemBytes: 8 << 30}}
	for _, c := range []struct {
		args  []string
		first string
	}{
		{[]string{"squeue", "-M", "corral"}, "CLUSTER: corral"},
		{[]string{"squeue", "--clusters=all", "-o", "%i"}, "CLUSTER: corral"},
		{[]string{"squeue", "-M", "corral", "-h", "-o", "%i"}, "11"}, // no CLUSTER line with -h
		{[]string{"sinfo", "--cluster=CORRAL"}, "CLUSTER: corral"},
		{[]string{"sinfo", "-M", "corral", "-h", "-o", "%P"}, "batch*"},
		{[]string{"sshare", "-M", "corral", "-n"}, "CLUSTER: corral"},
		{[]string{"sprio", "-M", "corral", "-h"}, ""},
		{[]string{"sacct", "-M", "corral", "-n", "-X", "-o", "JobID", "-j", "1"}, ""},
	} {
		r := f.slurm(t, "", c.args[0], c.args[1:]...)
		if first, _, _ := strings.Cut(r.stdout, "\n"); r.code != 0 || c.first != "" && strings.TrimSpace(first) != c.first {
			t.Errorf("%v: exit %d %q %q, want the first line %q", c.args, r.code, r.stdout, r.stderr, c.first)
		}
	}
	for _, cmd := range []string{"squeue", "sinfo", "sacct", "sprio", "sshare"} {
		r := f.slurm(t, "", cmd, "-M", "perlmutter")
		if r.code != 1 || !strings.Contains(r.stderr, "'perlmutter' can't be reached now, or it is an invalid entry for --cluster.") {
			t.Errorf("%s -M perlmutter: exit %d %q", cmd, r.code, r.stderr)
		}
	}
}

// squeue's and sinfo's options about things corral has none of: a job
// with a reservation or licenses (-R, -L) is none; a job has one
// partition, so -P lists each once; --array-unique lists pending tasks
// one a line, as -r; sinfo -T says there are no reservations.
func TestSqueueSinfoNoneOptions(t *testing.T) {
	f := MustFakeCtld(t)
	f.jobs = fixtureJobs(time.Now())
	for _, c := range []struct {
		cmd  string
		args []string
		want string
	}{
		{"squeue", []string{"-h", "-R", "maint"}, ""},
		{"squeue", []string{"-h", "--licenses=matlab"}, ""},
		{"squeue", []string{"-h", "-P", "-o", "%i", "-S", "i"}, "1\n3\n11\n12\n"},
		{"sinfo", []string{"-T"}, "No reservations in the system\n"},
	} {
		if r := f.slurm(t, "", c.cmd, c.args...); r.code != 0 || r.stdout != c.want {
			t.Errorf("%s %v: exit %d %q %q, want %q", c.cmd, c.args, r.code, r.stdout, r.stderr, c.want)
		}
	}
	if a, b := f.slurm(t, "", "squeue", "-h", "--array-unique"), f.slurm(t, "", "squeue", "-h", "-r"); a.code != 0 || a.stdout != b.stdout {
		t.Errorf("squeue --array-unique: exit %d %q, want -r's %q", a.code, a.stdout, b.stdout)
	}
}

func TestScontrolWaitJob(t *testing.T) {
	f := MustFakeCtld(t)
	f.jobs = []api.Job{
		{ID: 3, State: api.StateRunning},
		{ID: 4, State: api.StateCompleted},
		{ID: 5, State: api.StatePending, Reason: api.ReasonJobHeld},
		{ID: 6, State: api.StatePending, Reason: api.ReasonResources},
	}
	limit := waitJobLimit
	waitJobLimit = 0 // job 6 never starts: give up at the first look
	t.Cleanup(func() { waitJobLimit = limit })
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"3"}, 0, "scontrol: Nodes are ready for job 3\n"},
		{[]string{"4"}, 1, "scontrol: Job 4 no longer running\n"},
		{[]string{"5"}, 1, "scontrol: Job 5 no longer running\n"},
		{[]string{"6"}, 1, "scontrol: Problem running job 6\n"},
		{[]string{"99"}, 1, "scontrol: Problem running job 99\n"},
		{[]string{"x"}, 1, "Invalid job_id x"},
		{nil, 1, "too few arguments for keyword:wait_job\n"},
		{[]string{"3", "4"}, 1, "too many arguments for keyword:wait_job\n"},
	} {
		r := f.slurm(t, "", "scontrol", append([]string{"wait_job"}, c.args...)...)
		if r.code != c.code || r.stderr != c.stderr || r.stdout != "" {
			t.Errorf("scontrol wait_job %v: exit %d %q %q, want exit %d %q", c.args, r.code, r.stdout, r.stderr, c.code, c.stderr)
		}
	}
}
