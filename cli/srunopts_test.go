package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

func intp(n int) *int { return &n }

func noEnv(string) string { return "" }

func TestParseSrun(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want srunConfig
	}{
		{[]string{"hostname"}, srunConfig{req: api.StepRequest{Name: "hostname"}, argv: []string{"hostname"}}},
		{[]string{"-n2", "a"}, srunConfig{req: api.StepRequest{Name: "a", Ntasks: 2}, argv: []string{"a"}}},
		{[]string{"-n", "2", "a"}, srunConfig{req: api.StepRequest{Name: "a", Ntasks: 2}, argv: []string{"a"}}},
		{[]string{"--ntasks=2", "a"}, srunConfig{req: api.StepRequest{Name: "a", Ntasks: 2}, argv: []string{"a"}}},
		{[]string{"--ntasks", "2", "a"}, srunConfig{req: api.StepRequest{Name: "a", Ntasks: 2}, argv: []string{"a"}}},
		{[]string{"--ntasks-per-n", "2", "a"}, srunConfig{req: api.StepRequest{Name: "a", NtasksPerNode: 2}, argv: []string{"a"}}}, // unique prefix
		// Bundled short options, the last one taking the rest of the word.
		{[]string{"-lun3", "-lK", "a"}, srunConfig{req: api.StepRequest{Name: "a", Ntasks: 3}, label: true, killOnBadExit: true, argv: []string{"a"}}},
		// Options end at the command: its own options stay its own.
		{[]string{"-l", "/bin/ls", "-l", "--ntasks=9"}, srunConfig{req: api.StepRequest{Name: "ls"}, label: true, argv: []string{"/bin/ls", "-l", "--ntasks=9"}}},
		{[]string{"--", "-weird"}, srunConfig{req: api.StepRequest{Name: "-weird"}, argv: []string{"-weird"}}},
		{[]string{"-N", "2", "--ntasks-per-node", "2", "-c4", "--mem=2G", "--gpus-per-task=1", "-r1", "-m", "cyclic", "--overlap", "--exact", "-J", "train", "x"},
			srunConfig{req: api.StepRequest{Name: "train", Nodes: 2, NtasksPerNode: 2, CPUsPerTask: 4, MemBytes: 2 << 30, GPUsPerTask: 1,
				Relative: intp(1), Distribution: "cyclic", Overlap: true, Exact: true}, argv: []string{"x"}}},
		{[]string{"-w", "dev[1-2],gpu01", "-x", "dev3", "x"}, srunConfig{req: api.StepRequest{Name: "x", NodeList: []string{"dev1", "dev2", "gpu01"}, Exclude: []string{"dev3"}}, argv: []string{"x"}}},
		{[]string{"--exclusive", "-m", "block:cyclic", "x"}, srunConfig{req: api.StepRequest{Name: "x", Exact: true, Distribution: "block"}, exclusive: "--exclusive", argv: []string{"x"}}},
		{[]string{"--exclusive=user", "--mem=0", "x"}, srunConfig{req: api.StepRequest{Name: "x"}, exclusive: "--exclusive=user", memAll: true, argv: []string{"x"}}},
		{[]string{"--mem-per-cpu=0", "x"}, srunConfig{req: api.StepRequest{Name: "x"}, memAll: true, argv: []string{"x"}}}, // as --mem=0
		{[]string{"-o", "out-%t", "-e", "err-%N", "-i", "none", "-W", "30", "--jobid=12", "-u", "--mpi=none", "-vv", "x"},
			srunConfig{req: api.StepRequest{Name: "x"}, output: "out-%t", errput: "err-%N", input: "none", wait: 30 * time.Second, jobID: 12, verbose: 2, mpi: "none", argv: []string{"x"}}},
		{[]string{"--mpi=pmi2", "x"}, srunConfig{req: api.StepRequest{Name: "x"}, mpi: "pmi2", argv: []string{"x"}}},
		{[]string{"-K0", "--kill-on-bad-exit=1", "x"}, srunConfig{req: api.StepRequest{Name: "x"}, killOnBadExit: true, argv: []string{"x"}}},
		{[]string{"--kill-on-bad-exit=0", "x"}, srunConfig{req: api.StepRequest{Name: "x"}, argv: []string{"x"}}},
		// What Open MPI's mpirun sends, spelled the old way too.
		{[]string{"--ntasks-per-node=1", "--kill-on-bad-exit", "--cpu_bind=none", "--nodes=2", "--nodelist=dev1,dev2", "--ntasks=2", "orted", "-mca", "x"},
			srunConfig{req: api.StepRequest{Name: "orted", Nodes: 2, Ntasks: 2, NtasksPerNode: 1, NodeList: []string{"dev1", "dev2"}}, killOnBadExit: true, argv: []string{"orted", "-mca", "x"}}},
		// What MPICH's hydra sends.
		{[]string{"--nodelist", "dev1,dev2", "-N", "2", "-n", "2", "--input", "none", "/usr/bin/hydra_pmi_proxy", "--control-port", "dev1:4242", "-1"},
			srunConfig{req: api.StepRequest{Name: "hydra_pmi_proxy", Nodes: 2, Ntasks: 2, NodeList: []string{"dev1", "dev2"}}, input: "none",
				argv: []string{"/usr/bin/hydra_pmi_proxy", "--control-port", "dev1:4242", "-1"}}},
		{[]string{"--cpu-bind=cores", "x"}, srunConfig{req: api.StepRequest{Name: "x"}, warnings: []string{"--cpu-bind=cores is ignored: corral does not bind tasks to CPUs"}, argv: []string{"x"}}},
		{[]string{"--cpu-bind=q,cores", "x"}, srunConfig{req: api.StepRequest{Name: "x"}, warnings: []string{"--cpu-bind=q,cores is ignored: corral does not bind tasks to CPUs"}, argv: []string{"x"}}},
		// Snakemake's slurm executor: quiet asks nothing of corral, so no warning.
		{[]string{"-n1", "--cpu-bind=q", "x"}, srunConfig{req: api.StepRequest{Name: "x", Ntasks: 1}, argv: []string{"x"}}},
		{[]string{"--cpu-bind=verbose,none", "--cpu_bind=quiet", "x"}, srunConfig{req: api.StepRequest{Name: "x"}, argv: []string{"x"}}},
		// --pty: the output of tasks but 0 goes nowhere unless -o/-e say.
		{[]string{"--pty", "bash"}, srunConfig{req: api.StepRequest{Name: "bash"}, pty: true, output: "0", errput: "0", argv: []string{"bash"}}},
		{[]string{"--pty", "-o", "out-%t", "bash"}, srunConfig{req: api.StepRequest{Name: "bash"}, pty: true, output: "out-%t", errput: "0", argv: []string{"bash"}}},
		{[]string{"--version"}, srunConfig{version: true}},
		{[]string{"-V", "ignored"}, srunConfig{version: true, argv: []string{"ignored"}}},
		{[]string{"--mpi=list"}, srunConfig{mpiList: true}},
	} {
		got, err := parseSrun(tc.args, noEnv)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", tc.args, *got, tc.want)
		}
	}
}

func TestParseSrunNodelistFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(path, []byte("dev1\ndev[3-4], dev2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseSrun([]string{"-w", path, "x"}, noEnv)
	if err != nil || !reflect.DeepEqual(cfg.req.NodeList, []string{"dev1", "dev3", "dev4", "dev2"}) {
		t.Fatalf("nodelist from a file: %+v %v", cfg, err)
	}
}

func TestParseSrunErrors(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		want  string
		usage bool // a getopt mistake: srun adds the --help hint
	}{
		{[]string{"--foo", "x"}, "unrecognized option '--foo'", true},
		{[]string{"--foo=1", "x"}, "unrecognized option '--foo'", true},
		{[]string{"-y", "x"}, "invalid option -- 'y'", true},
		{[]string{"-ly", "x"}, "invalid option -- 'y'", true},
		{[]string{"-n"}, "option requires an argument -- 'n'", true},
		{[]string{"--ntasks"}, "option '--ntasks' requires an argument", true},
		{[]string{"--label=1", "x"}, "option '--label' doesn't allow an argument", true},
		{[]string{"--ex", "x"}, "option '--ex' is ambiguous; possibilities: '--exact' '--exclude' '--exclusive'", true},
		{[]string{"-n", "two", "x"}, `invalid --ntasks "two": give a whole number from 1`, false},
		{[]string{"-c", "0", "x"}, `invalid --cpus-per-task "0": give a whole number from 1`, false},
		{[]string{"-w", "dev[2-1]", "x"}, "--nodelist: ", false},
		{[]string{"--mem=lots", "x"}, `--mem: invalid size "lots"`, false},
		{[]string{"-m", "plane=2", "x"}, "--distribution=plane=2 is not supported: use block or cyclic", false},
		{[]string{"-i", "all", "x"}, "--input=all is not supported yet", false},
		{[]string{"-o", "out-%q", "x"}, `--output: pattern "out-%q": %q is not a field`, false},
		{[]string{"-e", "", "x"}, "--error needs a file name pattern", false},
		{[]string{"-lKn3", "x"}, `invalid --kill-on-bad-exit "n3": give 0 or 1`, false}, // K's optional value is glued
		{[]string{"--ntask", "2", "x"}, "option '--ntask' is ambiguous; possibilities: '--ntasks' '--ntasks-per-core' '--ntasks-per-gpu' '--ntasks-per-node' '--ntasks-per-socket'", true},
		{[]string{"-W", "-1", "x"}, `invalid --wait "-1"`, false},
		{[]string{"--jobid=abc", "x"}, `invalid --jobid "abc"`, false},
		{[]string{"--mpi=pmix_v3", "x"}, "--mpi=pmix_v3 is not supported: corral serves PMI-1 and PMI-2 (--mpi=pmi2, for MPICH programs); start Open MPI programs with mpirun inside the job", false},
		{[]string{"--mpi=mvapich", "x"}, "--mpi=mvapich: unknown MPI type (types: none, pmi2; pmi2 serves PMI-1 too)", false},
		{[]string{"--mpi=pmi1", "x"}, "--mpi=pmi1: unknown MPI type", false},
		{[]string{"-n2"}, "no command given to execute", false},
	} {
		_, err := parseSrun(tc.args, noEnv)
		if err == nil || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want {
			t.Errorf("%q: got %v, want %q...", tc.args, err, tc.want)
			continue
		}
		if _, isUsage := err.(errSrunUsage); isUsage != tc.usage {
			t.Errorf("%q: usage error %v, want %v", tc.args, isUsage, tc.usage)
		}
	}
}

func TestParseSrunEnvironment(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	batch := env("SLURM_NPROCS", "3", "SLURM_NTASKS", "4", "SLURM_NTASKS_PER_NODE", "2", "SLURM_JOB_NUM_NODES", "2",
		"SLURM_CPUS_PER_TASK", "8", "SLURM_JOB_NAME", "batchname", "SLURM_MEM_PER_NODE", "1024")
	for _, tc := range []struct {
		name  string
		env   func(string) string
		args  []string
		req   api.StepRequest
		notes int
	}{
		// The batch script's shape; SLURM_CPUS_PER_TASK, the job's name and
		// size and its node count are not srun options (Slurm 22.05).
		{"plain srun in a batch job", batch, []string{"x"}, api.StepRequest{Name: "x", Ntasks: 4, NtasksPerNode: 2}, 0},
		{"the command line wins", batch, []string{"-n", "2", "x"}, api.StepRequest{Name: "x", Ntasks: 2, NtasksPerNode: 2}, 0},
		// -N1 with the job's 4 tasks: 4 tasks on one node, --ntasks-per-node dropped with Slurm's warning.
		{"-N1", batch, []string{"-N1", "x"}, api.StepRequest{Name: "x", Nodes: 1, Ntasks: 4}, 1},
		{"-n1 -N2", nil, []string{"-n1", "-N2", "x"}, api.StepRequest{Name: "x", Nodes: 1, Ntasks: 1}, 1},
		{"srun's own variables", env("SRUN_CPUS_PER_TASK", "2", "SLURM_DISTRIBUTION", "cyclic", "SLURM_OVERLAP", "1", "SLURM_EXACT", "1", "SLURM_GPUS_PER_TASK", "1"),
			[]string{"x"}, api.StepRequest{Name: "x", CPUsPerTask: 2, Distribution: "cyclic", Overlap: true, Exact: true, GPUsPerTask: 1}, 0},
	} {
		if tc.env == nil {
			tc.env = noEnv
		}
		cfg, err := parseSrun(tc.args, tc.env)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(cfg.req, tc.req) || len(cfg.notes) != tc.notes {
			t.Errorf("%s: request %+v notes %q, want %+v and %d notes", tc.name, cfg.req, cfg.notes, tc.req, tc.notes)
		}
	}
	cfg, err := parseSrun([]string{"x"}, env("SLURM_LABELIO", "1", "SLURM_KILL_BAD_EXIT", "1", "SLURM_WAIT", "5", "SLURM_STDINMODE", "none", "SLURM_STDOUTMODE", "o-%t"))
	if err != nil || !cfg.label || !cfg.killOnBadExit || cfg.wait != 5*time.Second || cfg.input != "none" || cfg.output != "o-%t" {
		t.Errorf("I/O variables: %+v %v", cfg, err)
	}
	if _, err := parseSrun([]string{"x"}, env("SLURM_NTASKS", "many")); err == nil || err.Error() != `$SLURM_NTASKS: invalid --ntasks "many": give a whole number from 1` {
		t.Errorf("a bad variable: %v", err)
	}
	if cfg, err := parseSrun([]string{"x"}, env("SLURM_MPI_TYPE", "pmi2")); err != nil || cfg.mpi != "pmi2" {
		t.Errorf("SLURM_MPI_TYPE=pmi2: %+v, %v", cfg, err)
	}
	if cfg, err := parseSrun([]string{"--mpi=none", "x"}, env("SLURM_MPI_TYPE", "pmi2")); err != nil || cfg.mpi != "none" {
		t.Errorf("--mpi=none over SLURM_MPI_TYPE=pmi2: %+v, %v", cfg, err)
	}
	if _, err := parseSrun([]string{"x"}, env("SLURM_MPI_TYPE", "pmix")); err == nil || !strings.HasPrefix(err.Error(), "$SLURM_MPI_TYPE: --mpi=pmix is not supported") {
		t.Errorf("SLURM_MPI_TYPE=pmix: %v", err)
	}
	if cfg, err := parseSrun([]string{"--version"}, env("SLURM_NTASKS", "many")); err != nil || !cfg.version {
		t.Errorf("--version with a bad environment: %v", err)
	}
}

// The rest of srun's options: those corral acts on, those it passes to
// the allocation srun makes outside one, those it ignores with a
// warning, and those it refuses with a reason.
func TestParseSrunMoreOptions(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		check func(*srunConfig) bool
	}{
		{[]string{"--export=NONE", "x"}, func(c *srunConfig) bool { return c.export != nil && c.export.Mode == api.ExportNone }},
		{[]string{"--export=ALL", "x"}, func(c *srunConfig) bool { return c.export == nil }},
		{[]string{"--export=ALL,A=1", "x"}, func(c *srunConfig) bool { return c.export.Mode == api.ExportAll && c.export.Vars[0] == "A=1" }},
		{[]string{"-D", "sub", "x"}, func(c *srunConfig) bool { return c.chdir == "sub" }},
		{[]string{"--chdir=/tmp", "x"}, func(c *srunConfig) bool { return c.chdir == "/tmp" }},
		{[]string{"-Q", "x"}, func(c *srunConfig) bool { return c.quiet }},
		{[]string{"-N2", "-n4", "-c2", "--mem-per-cpu=1G", "x"}, func(c *srunConfig) bool { return c.req.MemBytes == 4<<30 }},
		{[]string{"--mem-per-cpu=512M", "x"}, func(c *srunConfig) bool { return c.req.MemBytes == 512<<20 }},
		{[]string{"-N1", "-n2", "--gres=gpu:2", "x"}, func(c *srunConfig) bool { return c.req.GPUsPerTask == 1 }},
		{[]string{"--gres=gpu:a100:1", "x"}, func(c *srunConfig) bool { return c.req.GPUsPerTask == 1 }},
		{[]string{"--gres=none", "x"}, func(c *srunConfig) bool { return c.req.GPUsPerTask == 0 }},
		{[]string{"--ntasks-per-node=2", "--gpus-per-node=4", "x"}, func(c *srunConfig) bool { return c.req.GPUsPerTask == 2 }},
		{[]string{"--open-mode=append", "x"}, func(c *srunConfig) bool { return c.appendOutput }},
		{[]string{"-I", "x"}, func(c *srunConfig) bool { return c.immediate == time.Nanosecond }},
		{[]string{"--immediate=3", "x"}, func(c *srunConfig) bool { return c.immediate == 3*time.Second }},
		{[]string{"-N", "1-2", "-n1", "x"}, func(c *srunConfig) bool { return c.req.Nodes == 1 && len(c.notes) == 0 }},
		{[]string{"--nodes=2-4", "x"}, func(c *srunConfig) bool { return c.req.Nodes == 4 && c.req.NodesMin == 2 }},
		{[]string{"--nodes=2-4", "-N", "3", "x"}, func(c *srunConfig) bool { return c.req.Nodes == 3 && c.req.NodesMin == 0 }},
		{[]string{"--hint=nomultithread", "--cpu-freq=high", "x"}, func(c *srunConfig) bool {
			return reflect.DeepEqual(c.warnings, []string{"--hint is ignored: corral does not bind tasks to cores or threads",
				"--cpu-freq is ignored: corral does not set CPU frequencies"})
		}},
		{[]string{"-X", "-E", "--propagate", "--task-prolog=/bin/true", "x"}, func(c *srunConfig) bool { return len(c.warnings) == 4 }},
		{[]string{"-q", "normal", "--hold", "-C", "a100", "--nice", "--comment=c", "x"}, func(c *srunConfig) bool {
			return reflect.DeepEqual(c.allocArgs, []string{"--qos=normal", "--hold", "--constraint=a100", "--nice", "--comment=c"}) &&
				reflect.DeepEqual(c.allocOnly, []string{"qos", "hold", "constraint", "nice", "comment"})
		}},
	} {
		c, err := parseSrun(tc.args, noEnv)
		if err != nil || !tc.check(c) {
			t.Errorf("%q: %+v, %v", tc.args, c, err)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mem=1G", "--mem-per-cpu=1G", "x"}, "--mem and --mem-per-cpu are mutually exclusive"},
		{[]string{"-n2", "--gres=gpu:3", "x"}, "--gres=gpu:3: 3 GPUs on a node do not divide among its 2 tasks; use --gpus-per-task"},
		{[]string{"--gres=gpu:1", "--gpus-per-task=1", "x"}, "--gpus-per-task and --gres=gpu:1 are mutually exclusive"},
		{[]string{"--gres=nic:1", "x"}, "--gres=nic:1: a step takes only gpu"},
		{[]string{"--export=", "x"}, "invalid --export"},
		{[]string{"--open-mode=sometimes", "x"}, `invalid --open-mode "sometimes"`},
		{[]string{"--het-group=1", "x"}, "--het-group=1: corral has no heterogeneous jobs"},
		{[]string{"--het-group=0", "x"}, "--het-group=0: corral has no heterogeneous jobs"},
		{[]string{"-N", "3-1", "x"}, `invalid --nodes "3-1"`},
		{[]string{"-N", "0-2", "x"}, `invalid --nodes "0-2"`},
		{[]string{"--test-only", "x"}, "--test-only is not supported by corral's srun"},
		{[]string{"-Z", "x"}, "--no-allocate is not supported"},
		{[]string{"-Ix", "y"}, `invalid --immediate "x": give seconds`},
	} {
		if _, err := parseSrun(tc.args, noEnv); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q...", tc.args, err, tc.want)
		}
	}
	env := map[string]string{"SLURM_EXPORT_ENV": "NONE", "SLURM_WORKING_DIR": "/data"}
	c, err := parseSrun([]string{"x"}, func(k string) string { return env[k] })
	if err != nil || c.export == nil || c.export.Mode != api.ExportNone || c.chdir != "/data" {
		t.Errorf("SLURM_EXPORT_ENV and SLURM_WORKING_DIR: %+v, %v", c, err)
	}
	for mode, want := range map[string]bool{"a": true, "t": false, "APPEND": true} {
		env := map[string]string{"SLURM_OPEN_MODE": mode}
		c, err := parseSrun([]string{"x"}, func(k string) string { return env[k] })
		if err != nil || c.appendOutput != want {
			t.Errorf("SLURM_OPEN_MODE=%s: append %v, %v; want %v", mode, c.appendOutput, err, want)
		}
	}
	if c, err := parseSrun([]string{"--open-mode=t", "x"}, func(k string) string { return map[string]string{"SLURM_OPEN_MODE": "a"}[k] }); err != nil || c.appendOutput {
		t.Errorf("--open-mode=t over SLURM_OPEN_MODE=a: append %v, %v", c.appendOutput, err)
	}
	env["SRUN_EXPORT_ENV"] = "ALL"
	if c, err := parseSrun([]string{"x"}, func(k string) string { return env[k] }); err != nil || c.export != nil {
		t.Errorf("SRUN_EXPORT_ENV=ALL over SLURM_EXPORT_ENV=NONE: %+v, %v", c, err)
	}
}

// --multi-prog runs each task's line of the file: the script srun makes
// of it, run by sh for each rank, picks that line, with %t the rank and
// %o its offset in the line's ranks, its words as the file quoted them.
func TestSrunMultiProg(t *testing.T) {
	conf := "# MPMD\n0      echo first %t\n1-2,5 echo 'mid dle' rank=%t off=%o\n*      echo rest $HOME \"%t\"\n"
	script, err := multiProgScript("mp.conf", conf)
	if err != nil {
		t.Fatal(err)
	}
	for rank, want := range map[int]string{0: "first 0", 1: "mid dle rank=1 off=0", 2: "mid dle rank=2 off=1",
		5: "mid dle rank=5 off=2", 3: "rest $HOME 3"} {
		cmd := exec.Command("/bin/sh", "-c", script, "multi-prog")
		cmd.Env = []string{"SLURM_PROCID=" + strconv.Itoa(rank), "PATH=/usr/bin:/bin", "HOME=/root"}
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("rank %d: %q (%v), want %q", rank, out, err, want)
		}
	}
	only, err := multiProgScript("mp.conf", "0 true\n")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", only, "multi-prog")
	cmd.Env = []string{"SLURM_PROCID=1"}
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "mp.conf has no line for task 1") {
		t.Errorf("a rank no line names: %q, %v", out, err)
	}
	for _, bad := range []string{"", "# nothing\n", "0\n", "x echo\n", "3-1 echo\n", "0 echo 'open\n"} {
		if _, err := multiProgScript("mp.conf", bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "mp.conf")
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := parseSrun([]string{"--multi-prog", "-n6", file}, noEnv)
	fromFile, _ := multiProgScript(file, conf)
	if err != nil || len(c.argv) != 4 || c.argv[0] != "/bin/sh" || c.argv[2] != fromFile || c.req.Name != "mp.conf" {
		t.Errorf("srun --multi-prog: %+v, %v", c, err)
	}
}
