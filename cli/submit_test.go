package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/corral-hpc/corral/api"
)

const jobScript = "#!/bin/bash\n#SBATCH -J train -c 4 --mem=2G\n#SBATCH --time=1:30:00 -p gpu\necho hi\n"

// MustWorkDir makes a temporary directory with the given files, enters it
// for the rest of the test and returns its path.
func MustWorkDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

func decodeSubmit(t *testing.T, r recorded) api.SubmitRequest {
	t.Helper()
	if r.Method != "POST" || r.Path != "/v1/jobs" {
		t.Fatalf("request %s %s, want POST /v1/jobs", r.Method, r.Path)
	}
	var req api.SubmitRequest
	if err := json.Unmarshal(r.Body, &req); err != nil {
		t.Fatalf("decoding submit: %v", err)
	}
	return req
}

// ownUmask is this process's umask as JobSpec.Umask writes it.
func ownUmask(t *testing.T) string {
	t.Helper()
	m := syscall.Umask(0)
	syscall.Umask(m)
	return api.FormatUmask(uint32(m))
}

// hostname is this host's name, which a submit sends (SLURM_SUBMIT_HOST).
func hostname(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	if err != nil {
		t.Skipf("this host has no name to submit from: %v", err)
	}
	return h
}

func TestSubmitBuildsSpec(t *testing.T) {
	t.Setenv("CORRAL_TEST_MARK", "submitted-env")
	t.Setenv("SLURM_UMASK", "")
	os.Unsetenv("SLURM_UMASK") // the submitter's umask, unless a case sets it
	for _, tc := range []struct {
		name   string
		args   []string
		stdin  string
		stdout string
		stderr string
		env    map[string]string
		check  func(t *testing.T, dir string, req api.SubmitRequest)
	}{
		{
			name:   "directives and defaults",
			args:   []string{"submit", "job.sh"},
			stdout: "Submitted batch job 7\n",
			check: func(t *testing.T, dir string, req api.SubmitRequest) {
				want := api.JobSpec{Name: "train", Script: jobScript, Partition: "gpu", CPUs: 4, CPUsPerTask: 4, MemBytes: 2 << 30,
					TimeLimit: 5400, Output: "corral-%j.out", WorkDir: dir, Env: req.Spec.Env, Umask: ownUmask(t), SubmitHost: hostname(t)}
				if !equalSpec(req.Spec, want) {
					t.Errorf("spec = %+v\nwant   %+v", req.Spec, want)
				}
				if !slices.Contains(req.Spec.Env, "CORRAL_TEST_MARK=submitted-env") {
					t.Errorf("environment not passed: %q", req.Spec.Env)
				}
				if req.OnBehalfOf != nil {
					t.Errorf("OnBehalfOf = %d, want none", *req.OnBehalfOf)
				}
			},
		},
		{
			name:   "command line wins and script args pass through",
			args:   []string{"submit", "-c", "2", "--mem=512M", "-J", "eval", "-o", "logs/%x-%j.out", "job.sh", "-c", "9", "x y"},
			stdout: "Submitted batch job 7\n",
			check: func(t *testing.T, dir string, req api.SubmitRequest) {
				s := req.Spec
				if s.CPUs != 2 || s.MemBytes != 512<<20 || s.Name != "eval" || s.TimeLimit != 5400 || s.Partition != "gpu" ||
					s.Output != "logs/%x-%j.out" || !slices.Equal(s.Args, []string{"-c", "9", "x y"}) {
					t.Errorf("spec = %+v", s)
				}
			},
		},
		{
			name:   "parsable, chdir relative, uid",
			args:   []string{"submit", "--parsable", "-D", "sub", "--uid", "1234", "job.sh"},
			stdout: "7\n",
			check: func(t *testing.T, dir string, req api.SubmitRequest) {
				if req.Spec.WorkDir != filepath.Join(dir, "sub") {
					t.Errorf("WorkDir = %q", req.Spec.WorkDir)
				}
				if req.OnBehalfOf == nil || *req.OnBehalfOf != 1234 {
					t.Errorf("OnBehalfOf = %v, want 1234", req.OnBehalfOf)
				}
			},
		},
		{
			name:   "uid by name",
			args:   []string{"submit", "--uid=root", "--parsable", "job.sh"},
			stdout: "7\n",
			check: func(t *testing.T, dir string, req api.SubmitRequest) {
				if req.OnBehalfOf == nil || *req.OnBehalfOf != 0 {
					t.Errorf("OnBehalfOf = %v, want 0", req.OnBehalfOf)
				}
			},
		},
		{
			name:   "SLURM_UMASK wins over the umask, as with sbatch",
			args:   []string{"submit", "--parsable", "job.sh"},
			env:    map[string]string{"SLURM_UMASK": "027"},
			stdout: "7\n",
			check: func(t *testing.T, dir string, req api.SubmitRequest) {
				if req.Spec.Umask != "0027" {
					t.Errorf("Umask = %q, want 0027", req.Spec.Umask)
				}
			},
		},
		{
			name:   "wrap",
			args:   []string{"submit", "--wrap", "sleep 5; echo done", "-t", "10"},
			stdout: "Submitted batch job 7\n",
			check: func(t *testing.T, dir string, req api.SubmitRequest) {
				want := api.JobSpec{Name: "wrap", Script: "#!/bin/sh\nsleep 5; echo done\n", CPUs: 1, TimeLimit: 600,
					Output: "corral-%j.out", WorkDir: dir, Env: req.Spec.Env, Umask: ownUmask(t), SubmitHost: hostname(t)}
				if !equalSpec(req.Spec, want) {
					t.Errorf("spec = %+v\nwant   %+v", req.Spec, want)
				}
			},
		},
		{
			name:   "script on stdin with parsable directive",
			args:   []string{"submit", "-"},
			stdin:  "#!/bin/sh\n#SBATCH --parsable\ntrue\n",
			stdout: "7\n",
			check: func(t *testing.T, dir string, req api.SubmitRequest) {
				if req.Spec.Script != "#!/bin/sh\n#SBATCH --parsable\ntrue\n" || req.Spec.Name != "stdin" {
					t.Errorf("spec = %+v", req.Spec)
				}
			},
		},
		{
			name:   "SBATCH_ variables override directives, the command line overrides them",
			args:   []string{"submit", "-t", "7", "job.sh"},
			env:    map[string]string{"SBATCH_PARTITION": "batch", "SBATCH_TIMELIMIT": "1:00:00", "SBATCH_JOB_NAME": "piped"},
			stdout: "Submitted batch job 7\n",
			check: func(t *testing.T, dir string, req api.SubmitRequest) {
				if s := req.Spec; s.Partition != "batch" || s.TimeLimit != 420 || s.Name != "piped" || s.CPUs != 4 {
					t.Errorf("spec = %+v", s)
				}
			},
		},
		{
			name:   "ignored options warn and still submit",
			args:   []string{"submit", "--mail-type=END", "job.sh"},
			stdout: "Submitted batch job 7\n",
			stderr: "corral submit: warning: --mail-type is ignored: this cluster sends no mail\n",
			check:  func(t *testing.T, dir string, req api.SubmitRequest) {},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			dir := MustWorkDir(t, map[string]string{"job.sh": jobScript, "sub/keep": ""})
			f := MustFakeCtld(t)
			r := runCLI(tc.stdin, append([]string{"--socket", f.socket}, tc.args...)...)
			if r.code != 0 || r.stdout != tc.stdout || r.stderr != tc.stderr {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 0, %q, %q", r.code, r.stdout, r.stderr, tc.stdout, tc.stderr)
			}
			tc.check(t, dir, decodeSubmit(t, f.MustOneRequest(t)))
		})
	}
}

func equalSpec(a, b api.JobSpec) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// --socket may also follow the command, and $CORRAL_SOCKET works alone.
func TestSubmitSocketSpellings(t *testing.T) {
	MustWorkDir(t, map[string]string{"job.sh": jobScript})
	f := MustFakeCtld(t)
	if r := runCLI("", "submit", "--socket", f.socket, "--parsable", "job.sh"); r.code != 0 || r.stdout != "7\n" {
		t.Errorf("--socket after submit: %+v", r)
	}
	t.Setenv(api.SocketEnv, f.socket)
	if r := runCLI("", "submit", "job.sh"); r.code != 0 || r.stdout != "Submitted batch job 7\n" {
		t.Errorf("$CORRAL_SOCKET: %+v", r)
	}
	if n := len(f.Requests()); n != 2 {
		t.Errorf("controller got %d requests, want 2", n)
	}
}

func TestSubmitBadInput(t *testing.T) {
	const p = "corral submit: "
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mem", "12Q", "job.sh"}, p + `invalid --mem "12Q": use a number with an optional K, M, G or T suffix`},
		{[]string{"--time=1:2:3:4", "job.sh"}, p + `invalid --time "1:2:3:4": use minutes, M:S, H:M:S, D-H, D-H:M or D-H:M:S (or UNLIMITED)`},
		{[]string{"-c", "0", "job.sh"}, p + "--cpus-per-task must be at least 1 (got 0)"},
		{[]string{"--foo", "job.sh"}, p + "unrecognized option --foo"},
		{[]string{"job.sh", "--mem"}, ""}, // an argument of the script: accepted
		{[]string{"--mem"}, p + "option --mem needs a value (SIZE)"},
		{[]string{}, p + `missing script: give a script file or --wrap "COMMAND"`},
		{[]string{"empty.sh"}, p + "script empty.sh is empty"},
		{[]string{"missing.sh"}, p + "cannot read script missing.sh: no such file or directory"},
		{[]string{"sub"}, p + "cannot read script sub: it is a directory"},
		{[]string{"--wrap", "ls", "job.sh"}, p + "--wrap cannot be used together with a script (got job.sh)"},
		{[]string{"bad.sh"}, p + `script bad.sh line 2: invalid --mem "lots": use a number with an optional K, M, G or T suffix`},
		{[]string{"-D", "/nonexistent/dir", "job.sh"}, p + "work directory /nonexistent/dir does not exist or is not a directory"},
		{[]string{"--uid", "no-such-user-xyz", "job.sh"}, p + `invalid --uid "no-such-user-xyz": no such user`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			MustWorkDir(t, map[string]string{"job.sh": jobScript, "empty.sh": "", "sub/x": "",
				"bad.sh": "#!/bin/sh\n#SBATCH --mem lots\n"})
			f := MustFakeCtld(t)
			r := f.run(append([]string{"submit"}, tc.args...)...)
			if tc.want == "" {
				if r.code != 0 {
					t.Errorf("exit %d, stderr %q", r.code, r.stderr)
				}
				return
			}
			mustFail(t, r, 2, tc.want)
			if n := len(f.Requests()); n != 0 {
				t.Errorf("bad input reached the controller (%d requests)", n)
			}
		})
	}
}

// TestSubmitValidatesBeforeSending: what the controller's first checks
// refuse (here an environment entry over the 64 KiB bound, which no option
// parser sees) is refused before any request, in the controller's words
// (the field named as in the request body) and with its exit status, for
// a submit and a --test-only alike.
func TestSubmitValidatesBeforeSending(t *testing.T) {
	t.Setenv("CORRAL_TEST_BIG", strings.Repeat("x", api.MaxFieldBytes))
	for _, args := range [][]string{{"submit", "job.sh"}, {"submit", "--test-only", "job.sh"}} {
		MustWorkDir(t, map[string]string{"job.sh": jobScript})
		f := MustFakeCtld(t)
		r := f.run(args...)
		if r.code != 2 || !strings.HasPrefix(r.stderr, "corral submit: spec.env[") ||
			!strings.HasSuffix(r.stderr, "] is 65552 bytes long; at most 65536 are allowed\n") {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
		if n := len(f.Requests()); n != 0 {
			t.Errorf("%v: an invalid job reached the controller (%d requests)", args, n)
		}
	}
}

func TestSubmitRejectedByController(t *testing.T) {
	for _, tc := range []struct {
		status int
		msg    string
		code   int
	}{
		{400, "partition gpu does not exist (partitions: batch)", 2},
		{403, "only root may submit for another user", 1},
		{500, "disk full", 1},
	} {
		MustWorkDir(t, map[string]string{"job.sh": jobScript})
		f := MustFakeCtld(t)
		f.submitStatus, f.submitError = tc.status, tc.msg
		r := f.run("submit", "job.sh")
		mustFail(t, r, tc.code, "corral submit: "+tc.msg)
		if r.stdout != "" {
			t.Errorf("stdout %q after a rejected submit", r.stdout)
		}
	}
}

func TestSubmitHelp(t *testing.T) {
	r := runCLI("", "submit", "--help")
	if r.code != 0 || r.stderr != "" || !contains(r.stdout, "--cpus-per-task N", "--wrap COMMAND", "usage: corral submit") {
		t.Errorf("help: %+v", r)
	}
}
