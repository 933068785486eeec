package jobspec

import (
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// scripts is an in-memory file system for Parse's ReadFunc; it records
// which paths were read.
type scripts struct {
	files map[string]string
	reads []string
}

func (s *scripts) read(path string) ([]byte, error) {
	s.reads = append(s.reads, path)
	text, ok := s.files[path]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return []byte(text), nil
}

func newScripts(kv ...string) *scripts {
	s := &scripts{files: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		s.files[kv[i]] = kv[i+1]
	}
	return s
}

// MustParse parses args against the given scripts or fails the test.
func MustParse(t *testing.T, s *scripts, args ...string) *Request {
	t.Helper()
	r, err := Parse(args, s.read)
	if err != nil {
		t.Fatalf("Parse(%q): %v", args, err)
	}
	return r
}

const plain = "#!/bin/sh\necho hi\n"

func TestParseBuildsSpec(t *testing.T) {
	full := "#!/bin/bash\n" +
		"#SBATCH --job-name=train -c 4 --mem=8G\n" +
		"#SBATCH -t 1-02:00:00 -p gpu\n" +
		"#CORRAL -o out/%j.log -e err/%j.log\n" +
		"#SBATCH -D /data/run --shm 1G -N 2\n" +
		"#SBATCH --parsable --uid 1001\n" +
		"python train.py\n"
	for _, tc := range []struct {
		name    string
		scripts *scripts
		args    []string
		want    Request
	}{
		{
			name:    "defaults",
			scripts: newScripts("dir/job.sh", plain),
			args:    []string{"dir/job.sh"},
			want: Request{ScriptPath: "dir/job.sh", Spec: api.JobSpec{
				Name: "job.sh", Script: plain, CPUs: 1, Output: "corral-%j.out"}},
		},
		{
			name:    "every directive",
			scripts: newScripts("job.sh", full),
			args:    []string{"job.sh"},
			want: Request{ScriptPath: "job.sh", Parsable: true, OnBehalfOf: "1001", Spec: api.JobSpec{
				Name: "train", Script: full, Partition: "gpu", Nodes: 2, CPUs: 4, CPUsPerTask: 4, MemBytes: 8 << 30,
				ShmBytes: 1 << 30, TimeLimit: 86400 + 2*3600, Output: "out/%j.log", Error: "err/%j.log",
				WorkDir: "/data/run"}},
		},
		{
			name:    "command line overrides directives",
			scripts: newScripts("job.sh", full),
			args: []string{"-J", "other", "--cpus-per-task=2", "--mem", "512", "--time=30", "--partition=cpu",
				"--output", "o.txt", "--error=e.txt", "--chdir=/x", "--shm=64M", "--nodes=1", "--uid=bob",
				"--socket", "/tmp/s.sock", "job.sh"},
			want: Request{ScriptPath: "job.sh", Parsable: true, OnBehalfOf: "bob", Socket: "/tmp/s.sock", Spec: api.JobSpec{
				Name: "other", Script: full, Partition: "cpu", Nodes: 1, CPUs: 2, CPUsPerTask: 2, MemBytes: 512 << 20,
				ShmBytes: 64 << 20, TimeLimit: 30 * 60, Output: "o.txt", Error: "e.txt", WorkDir: "/x"}},
		},
		{
			name:    "script arguments are not options",
			scripts: newScripts("job.sh", "#!/bin/sh\n#SBATCH -c 3\nrun\n"),
			args:    []string{"-J", "a", "job.sh", "-c", "8", "--foo", "--", "x y"},
			want: Request{ScriptPath: "job.sh", Spec: api.JobSpec{
				Name: "a", Script: "#!/bin/sh\n#SBATCH -c 3\nrun\n", Args: []string{"-c", "8", "--foo", "--", "x y"},
				CPUs: 3, CPUsPerTask: 3, Output: "corral-%j.out"}},
		},
		{
			name:    "double dash ends options",
			scripts: newScripts("-weird.sh", plain),
			args:    []string{"-c2", "--", "-weird.sh", "a"},
			want: Request{ScriptPath: "-weird.sh", Spec: api.JobSpec{
				Name: "-weird.sh", Script: plain, Args: []string{"a"}, CPUs: 2, CPUsPerTask: 2, Output: "corral-%j.out"}},
		},
		{
			name:    "short and prefix spellings",
			scripts: newScripts("job.sh", plain),
			args:    []string{"-c4", "-Jname", "-N", "3", "--part", "p1", "--time=5:00", "--pars", "-pp2", "--job-n=n2", "job.sh"},
			want: Request{ScriptPath: "job.sh", Parsable: true, Spec: api.JobSpec{
				Name: "n2", Script: plain, Partition: "p2", Nodes: 3, CPUs: 4, CPUsPerTask: 4, TimeLimit: 300, Output: "corral-%j.out"}},
		},
		{
			name:    "last one wins",
			scripts: newScripts("job.sh", "#!/bin/sh\n#SBATCH -c 2 -c 3\n#SBATCH -c 5\nrun\n"),
			args:    []string{"job.sh"},
			want: Request{ScriptPath: "job.sh", Spec: api.JobSpec{
				Name: "job.sh", Script: "#!/bin/sh\n#SBATCH -c 2 -c 3\n#SBATCH -c 5\nrun\n", CPUs: 5, CPUsPerTask: 5, Output: "corral-%j.out"}},
		},
		{
			name:    "wrap",
			scripts: newScripts(),
			args:    []string{"--wrap", "echo a; sleep 1", "-c", "2"},
			want: Request{Spec: api.JobSpec{
				Name: "wrap", Script: "#!/bin/sh\necho a; sleep 1\n", CPUs: 2, CPUsPerTask: 2, Output: "corral-%j.out"}},
		},
		{
			name:    "wrap with a job name and unlimited time",
			scripts: newScripts(),
			args:    []string{"--wrap=hostname", "-J", "h", "-t", "UNLIMITED"},
			want: Request{Spec: api.JobSpec{
				Name: "h", Script: "#!/bin/sh\nhostname\n", CPUs: 1, TimeUnlimited: true, Output: "corral-%j.out"}},
		},
		{
			name:    "stdin script",
			scripts: newScripts("-", plain),
			args:    []string{"-"},
			want: Request{ScriptPath: "-", Spec: api.JobSpec{
				Name: "stdin", Script: plain, CPUs: 1, Output: "corral-%j.out"}},
		},
		{
			name:    "help needs no script",
			scripts: newScripts(),
			args:    []string{"-c", "2", "--help", "missing.sh"},
			want:    Request{Help: true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := MustParse(t, tc.scripts, tc.args...)
			got.Warnings = nil
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", *got, tc.want)
			}
		})
	}
}

func TestParseWarnings(t *testing.T) {
	s := newScripts("job.sh", "#!/bin/sh\n#SBATCH --mail-type=END -A proj\n#SBATCH --mail-type=FAIL --nodes=2-4\necho\n#SBATCH -c 2\n#SBATCH -c 3\n")
	r := MustParse(t, s, "--licenses", "x", "job.sh")
	want := []string{
		"script job.sh: 2 directive line(s) after the first command are ignored (first at line 5)",
		"--mail-type is ignored: this cluster sends no mail",
		"--licenses is ignored: this cluster tracks no licenses",
		"--nodes=2-4: corral allocates exactly the minimum, 2 node(s)",
	}
	if !reflect.DeepEqual(r.Warnings, want) {
		t.Errorf("warnings = %q\nwant %q", r.Warnings, want)
	}
	if r.Spec.CPUs != 1 {
		t.Errorf("a directive after the first command was applied: CPUs = %d", r.Spec.CPUs)
	}
}

func TestParseErrors(t *testing.T) {
	const hintSize = "use a number with an optional K, M, G or T suffix"
	const hintTime = "use minutes, M:S, H:M:S, D-H, D-H:M or D-H:M:S (or UNLIMITED)"
	s := newScripts(
		"job.sh", plain,
		"empty.sh", "",
		"blank.sh", " \n\t\n",
		"dos.sh", "#!/bin/sh\r\necho\r\n",
		"nul.sh", "#!/bin/sh\necho \x00\n",
		"big.sh", "#!/bin/sh\n"+strings.Repeat("#", MaxScriptBytes),
		"badmem.sh", "#!/bin/sh\n#SBATCH -c 2\n#SBATCH --mem=12Q\necho\n",
		"unknown.sh", "#!/bin/sh\n#SBATCH --foo\n",
		"positional.sh", "#!/bin/sh\n#SBATCH -c 1 foo\n",
		"dashdash.sh", "#!/bin/sh\n#SBATCH --\n",
		"wrapdir.sh", "#!/bin/sh\n#SBATCH --wrap=ls\n",
		"socketdir.sh", "#!/bin/sh\n#SBATCH --socket /x\n",
		"quote.sh", "#!/bin/sh\n\n#SBATCH -J 'x\n",
		"noshebang.sh", "#SBATCH -c 2\necho\n",
		"blankfirst.sh", "\n#!/bin/sh\necho\n",
		"missingval.sh", "#!/bin/sh\n#SBATCH -t\n",
		"zero.sh", "#!/bin/sh\n#CORRAL --cpus-per-task 0\n",
	)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mem", "12Q", "job.sh"}, `invalid --mem "12Q": ` + hintSize},
		{[]string{"--shm=lots", "job.sh"}, `invalid --shm "lots": ` + hintSize},
		{[]string{"-t", "1:2:3:4", "job.sh"}, `invalid --time "1:2:3:4": ` + hintTime},
		{[]string{"--time=", "job.sh"}, `invalid --time "": ` + hintTime},
		{[]string{"-c", "0", "job.sh"}, "--cpus-per-task must be at least 1 (got 0)"},
		{[]string{"-c-3", "job.sh"}, "--cpus-per-task must be at least 1 (got -3)"},
		{[]string{"-c", "two", "job.sh"}, `invalid --cpus-per-task "two": use a whole number`},
		{[]string{"-N", "0", "job.sh"}, "--nodes must be at least 1 (got 0)"},
		{[]string{"--nodes=2-1", "job.sh"}, `invalid --nodes "2-1": use a count (2, 1k), a range MIN-MAX or a list like 1,5,9`},
		{[]string{"--foo", "job.sh"}, "unrecognized option --foo"},
		{[]string{"--foo=1", "job.sh"}, "unrecognized option --foo"},
		{[]string{"-Z", "job.sh"}, "unrecognized option -Z"},
		{[]string{"-c2Z", "job.sh"}, `invalid --cpus-per-task "2Z": use a whole number`},
		{[]string{"--co", "4", "job.sh"}, "option --co is ambiguous (--comment, --consolidate-segments, --constraint, --container, --container-id, --container-image, --contiguous, --core-spec, --cores-per-socket)"},
		{[]string{"--=x", "job.sh"}, "unrecognized option --"},
		{[]string{"job.sh", "--mem"}, ""}, // script argument, not an option: no error
		{[]string{"--mem"}, "option --mem needs a value (SIZE)"},
		{[]string{"-c"}, "option --cpus-per-task needs a value (N)"},
		{[]string{"--parsable=yes", "job.sh"}, "option --parsable takes no value"},
		{[]string{"-J", "", "job.sh"}, "--job-name must not be empty"},
		{[]string{"-J", "a\nb", "job.sh"}, `invalid --job-name "a\nb": control characters are not allowed`},
		{[]string{"-p", "", "job.sh"}, "--partition must not be empty"},
		{[]string{}, `missing script: give a script file or --wrap "COMMAND"`},
		{[]string{"-c", "2", "--"}, `missing script: give a script file or --wrap "COMMAND"`},
		{[]string{"--wrap", "ls", "job.sh"}, "--wrap cannot be used together with a script (got job.sh)"},
		{[]string{"--wrap", " "}, `invalid --wrap " ": give a non-empty shell command`},
		{[]string{"nope.sh"}, "cannot read script nope.sh: file does not exist"},
		{[]string{"empty.sh"}, "script empty.sh is empty"},
		{[]string{"blank.sh"}, "script blank.sh is empty"},
		{[]string{"dos.sh"}, `script dos.sh has DOS line breaks (\r\n): convert it with dos2unix`},
		{[]string{"nul.sh"}, "script nul.sh contains NUL bytes: it is not a text file"},
		{[]string{"big.sh"}, "script big.sh is larger than the limit of 2097152 bytes"},
		{[]string{"-c", "8", "badmem.sh"}, `script badmem.sh line 3: invalid --mem "12Q": ` + hintSize},
		{[]string{"unknown.sh"}, "script unknown.sh line 2: unrecognized option --foo"},
		{[]string{"positional.sh"}, `script positional.sh line 2: unexpected argument "foo"`},
		{[]string{"dashdash.sh"}, `script dashdash.sh line 2: unexpected argument "--"`},
		{[]string{"wrapdir.sh"}, "script wrapdir.sh line 2: --wrap can only be given on the command line"},
		{[]string{"socketdir.sh"}, "script socketdir.sh line 2: --socket can only be given on the command line"},
		{[]string{"quote.sh"}, "script quote.sh line 3: unterminated quote in directive"},
		{[]string{"missingval.sh"}, "script missingval.sh line 2: option --time needs a value (TIME)"},
		{[]string{"zero.sh"}, "script zero.sh line 2: --cpus-per-task must be at least 1 (got 0)"},
		{[]string{"noshebang.sh"}, "script noshebang.sh does not look like a batch script: its first line must start with #! and an interpreter, such as #!/bin/sh"},
		{[]string{"blankfirst.sh"}, "script blankfirst.sh does not look like a batch script: its first line must start with #! and an interpreter, such as #!/bin/sh"},
	} {
		_, err := Parse(tc.args, s.read)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Parse(%q): unexpected error %v", tc.args, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("Parse(%q) error = %v\nwant %q", tc.args, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("Parse(%q) error spans lines: %q", tc.args, err)
		}
	}
}

// Bad options on the command line are reported before the script is read,
// so a typo never depends on the script's contents.
func TestParseChecksCommandLineFirst(t *testing.T) {
	s := newScripts("badmem.sh", "#SBATCH --mem=12Q\n")
	_, err := Parse([]string{"-c", "0", "badmem.sh"}, s.read)
	if err == nil || err.Error() != "--cpus-per-task must be at least 1 (got 0)" {
		t.Fatalf("error = %v", err)
	}
	if len(s.reads) != 0 {
		t.Errorf("script was read (%q) despite a bad command line", s.reads)
	}
}

func TestOptionsHelpListsEveryOption(t *testing.T) {
	help := OptionsHelp()
	words := strings.Fields(help)
	for _, o := range options {
		listed := slices.ContainsFunc(words, func(w string) bool {
			return w == "--"+o.long || strings.HasPrefix(w, "--"+o.long+"[=")
		})
		if listed == o.hidden {
			t.Errorf("--%s: listed in help = %v, hidden = %v", o.long, listed, o.hidden)
		}
		if (o.ignore != "") == (o.apply != nil) {
			t.Errorf("option --%s must have exactly one of ignored and apply", o.long)
		}
	}
	seen := map[byte]string{}
	for _, o := range options {
		if o.short == 0 {
			continue
		}
		if prev, dup := seen[o.short]; dup {
			t.Errorf("-%c is both --%s and --%s", o.short, prev, o.long)
		}
		seen[o.short] = o.long
	}
}
