package shim_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/noded/shim"
	"golang.org/x/sys/unix"
)

// otherUID owns the files "another user" prepared; no job runs as it.
const otherUID = 4242

// fileMeta is what a job's file must keep: kind, owner, mode, ACL.
type fileMeta struct {
	uid, gid, mode uint32
	acl            string
}

func metaOf(t *testing.T, path string) fileMeta {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	m := fileMeta{uid: st.Uid, gid: st.Gid, mode: st.Mode}
	buf := make([]byte, 4096)
	if n, err := unix.Lgetxattr(path, "system.posix_acl_access", buf); err == nil {
		m.acl = string(buf[:n])
	}
	return m
}

// mustFile creates path with content, mode and owner, as root.
func mustFile(t *testing.T, path, content string, mode os.FileMode, uid int) {
	t.Helper()
	err := os.WriteFile(path, []byte(content), mode)
	if err == nil {
		err = os.Chmod(path, mode) // umask
	}
	if err == nil {
		err = os.Lchown(path, uid, uid)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// mustLink creates a symlink path -> target owned by uid.
func mustLink(t *testing.T, target, path string, uid int) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
}

// mustStickyDir is a root-owned 1777 directory, like /tmp or a shared
// scratch.
func mustStickyDir(t *testing.T) string {
	t.Helper()
	d := containertest.MustUserDir(t, 0, 0)
	if err := unix.Chmod(d, 0o1777); err != nil { // os.Chmod ignores a raw 0o1000
		t.Fatal(err)
	}
	return d
}

func mustFIFO(t *testing.T, path string) {
	t.Helper()
	if err := unix.Mkfifo(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, containertest.Nobody, containertest.Nobody); err != nil {
		t.Fatal(err)
	}
}

// runWatched runs the job, failing instead of hanging if the shim blocks
// (the FIFO cases did, forever, before the fix).
func runWatched(t *testing.T, tj *testJob, ctl shim.Controls) *shim.Result {
	t.Helper()
	done := make(chan *shim.Result, 1)
	go func() { done <- shim.Run(tj.dir, ctl) }()
	select {
	case r := <-done:
		tj.mustBeClean(t)
		return r
	case <-time.After(time.Minute):
		t.Fatal("the shim did not finish the job within a minute: blocked")
		return nil
	}
}

// TestStdioFiles: the files a job names as --input, -o and -e, for every
// kind an attacker may prepare, open or are refused as documented in
// stdiofile.go, and none of them changes owner, mode or ACL. The old
// shim gave the job's user ownership of any file it could open (runc
// fchowns its stdio) and hung on a FIFO.
func TestStdioFiles(t *testing.T) {
	type check struct {
		path, content string // content "" means not checked
	}
	tests := []struct {
		name   string
		script string
		// prepare makes the files in work (the job's work dir, nobody's)
		// and sticky (root's 1777 dir), edits the launch, and names the
		// files whose metadata must not change and what they must hold.
		prepare   func(t *testing.T, j *api.LaunchRequest, work, sticky string) []check
		wantState api.JobState
		wantMsg   string
		wantOut   string // the job's default output, "" not checked
	}{
		{"root's 0644 file as --input is read, not taken", "cat\n",
			func(t *testing.T, j *api.LaunchRequest, work, sticky string) []check {
				root := containertest.MustUserDir(t, 0, 0)
				in := filepath.Join(root, "rootfile")
				mustFile(t, in, "t\n", 0o644, 0)
				j.Input = in
				return []check{{in, "t\n"}}
			}, api.StateCompleted, "", "t\n"},
		{"another user's 0644 file as -o is refused by the kernel", "echo pwned\n",
			func(t *testing.T, j *api.LaunchRequest, work, sticky string) []check {
				out := filepath.Join(work, "theirs.out")
				mustFile(t, out, "theirs\n", 0o644, otherUID)
				j.Output = out
				return []check{{out, "theirs\n"}}
			}, api.StateFailed, "permission denied", ""},
		{"world-writable 0666 file appended to keeps its owner", "echo more\n",
			func(t *testing.T, j *api.LaunchRequest, work, sticky string) []check {
				open := containertest.MustUserDir(t, 0, 0)
				out := filepath.Join(open, "shared.log")
				mustFile(t, out, "log\n", 0o666, 0)
				j.Output, j.OpenMode = out, "append"
				return []check{{out, "log\nmore\n"}}
			}, api.StateCompleted, "", ""},
		{"another user's 0666 file in a sticky dir is refused", "echo secret\n",
			func(t *testing.T, j *api.LaunchRequest, work, sticky string) []check {
				out := filepath.Join(sticky, "trap.out")
				mustFile(t, out, "", 0o666, otherUID)
				j.Output, j.OpenMode = out, "append"
				return []check{{out, ""}}
			}, api.StateFailed, "belongs to uid 4242, in a sticky directory", ""},
		{"own file in a sticky dir is used", "echo mine\n",
			func(t *testing.T, j *api.LaunchRequest, work, sticky string) []check {
				out := filepath.Join(sticky, "mine.out")
				mustFile(t, out, "old\n", 0o640, containertest.Nobody)
				j.Output = out
				return []check{{out, "mine\n"}}
			}, api.StateCompleted, "", ""},
		{"a hard link to the user's file in a sticky dir is refused", "echo x\n",
			func(t *testing.T, j *api.LaunchRequest, work, sticky string) []check {
				precious := filepath.Join(work, "precious")
				mustFile(t, precious, "keep\n", 0o644, containertest.Nobody)
				out := filepath.Join(sticky, "linked.out")
				if err := os.Link(precious, out); err != nil {
					t.Fatal(err)
				}
				j.Output = out
				return []check{{precious, "keep\n"}}
			}, api.StateFailed, "hard links", ""},
		{"symlink planted by another user as the default output is refused", "echo x\n",
			func(t *testing.T, j *api.LaunchRequest, work, sticky string) []check {
				precious := filepath.Join(work, "precious")
				mustFile(t, precious, "keep\n", 0o644, containertest.Nobody)
				planted := filepath.Join(sticky, fmt.Sprintf("corral-%d.out", j.JobID))
				mustLink(t, precious, planted, otherUID)
				j.WorkDir = sticky
				return []check{{precious, "keep\n"}, {planted, ""}}
			}, api.StateFailed, "symlink owned by uid 4242", ""},
		{"the user's own symlink is followed", "echo via-link\n",
			func(t *testing.T, j *api.LaunchRequest, work, sticky string) []check {
				target := filepath.Join(work, "target.out")
				mustFile(t, target, "", 0o600, containertest.Nobody)
				link := filepath.Join(sticky, "mylink")
				mustLink(t, target, link, containertest.Nobody)
				j.Output = link
				return []check{{target, "via-link\n"}, {link, ""}}
			}, api.StateCompleted, "", ""},
		{"a relative link target is resolved from the link's real directory", "echo rel\n",
			func(t *testing.T, j *api.LaunchRequest, work, sticky string) []check {
				inner := filepath.Join(work, "real", "inner")
				if err := os.MkdirAll(inner, 0o755); err != nil {
					t.Fatal(err)
				}
				target := filepath.Join(work, "real", "target.out")
				mustFile(t, target, "", 0o644, containertest.Nobody)
				mustLink(t, "real/inner", filepath.Join(work, "alias"), containertest.Nobody)
				mustLink(t, "../target.out", filepath.Join(inner, "out.link"), containertest.Nobody)
				// Lexically alias/../target.out would be work/target.out.
				j.Output = filepath.Join(work, "alias", "out.link")
				return []check{{target, "rel\n"}}
			}, api.StateCompleted, "", ""},
		{"a chain through another user's symlink is refused", "echo x\n",
			func(t *testing.T, j *api.LaunchRequest, work, sticky string) []check {
				precious := filepath.Join(work, "precious")
				mustFile(t, precious, "keep\n", 0o644, containertest.Nobody)
				theirs := filepath.Join(sticky, "theirs")
				mustLink(t, precious, theirs, otherUID)
				mine := filepath.Join(work, "mine")
				mustLink(t, theirs, mine, containertest.Nobody)
				j.Output = mine
				return []check{{precious, "keep\n"}}
			}, api.StateFailed, "symlink owned by uid 4242", ""},
		{"FIFO as -o is refused", "echo hi\n",
			func(t *testing.T, j *api.LaunchRequest, work, sticky string) []check {
				ff := filepath.Join(work, "ff")
				mustFIFO(t, ff)
				j.Output = ff
				return []check{{ff, ""}}
			}, api.StateFailed, "it is a FIFO", ""},
		{"FIFO as -e is refused", "echo hi\n",
			func(t *testing.T, j *api.LaunchRequest, work, sticky string) []check {
				ff := filepath.Join(work, "ff")
				mustFIFO(t, ff)
				j.Error = ff
				return []check{{ff, ""}}
			}, api.StateFailed, "it is a FIFO", ""},
		{"FIFO as --input is refused", "cat\n",
			func(t *testing.T, j *api.LaunchRequest, work, sticky string) []check {
				ff := filepath.Join(work, "ff")
				mustFIFO(t, ff)
				j.Input = ff
				return []check{{ff, ""}}
			}, api.StateFailed, "it is a FIFO", ""},
		{"FIFO planted by another user as the default output is refused", "echo secret\n",
			func(t *testing.T, j *api.LaunchRequest, work, sticky string) []check {
				ff := filepath.Join(sticky, fmt.Sprintf("corral-%d.out", j.JobID))
				mustFIFO(t, ff)
				os.Chown(ff, otherUID, otherUID)
				j.WorkDir = sticky
				return []check{{ff, ""}}
			}, api.StateFailed, "FIFO", ""},
		{"a character device other than /dev/null is refused", "cat\n",
			func(t *testing.T, j *api.LaunchRequest, work, sticky string) []check {
				j.Input = "/dev/zero"
				return []check{{"/dev/zero", ""}}
			}, api.StateFailed, "a character device", ""},
		{"/dev/null as --input and -e", "cat; echo err >&2; echo out\n",
			func(t *testing.T, j *api.LaunchRequest, work, sticky string) []check {
				j.Input, j.Error = os.DevNull, os.DevNull
				return []check{{os.DevNull, ""}}
			}, api.StateCompleted, "", "out\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sticky := mustStickyDir(t)
			var checks []check
			tj := mustJob(t, tc.script, func(j *shim.Job) {
				checks = tc.prepare(t, &j.Launch, j.Launch.WorkDir, sticky)
			})
			before := map[string]fileMeta{}
			for _, c := range checks {
				before[c.path] = metaOf(t, c.path)
			}
			r := runWatched(t, tj, shim.Controls{})
			if r.State != tc.wantState || !strings.Contains(r.Message, tc.wantMsg) {
				t.Errorf("result %s %q, want %s mentioning %q", r.State, r.Message, tc.wantState, tc.wantMsg)
			}
			if tc.wantState == api.StateFailed && r.ExitCode == 0 {
				t.Errorf("a refused job ended with exit code 0")
			}
			for _, c := range checks {
				if got := metaOf(t, c.path); got != before[c.path] {
					t.Errorf("%s changed: %+v, was %+v", c.path, got, before[c.path])
				}
				if c.content == "" {
					continue
				}
				if b, err := os.ReadFile(c.path); err != nil || !bytes.Equal(b, []byte(c.content)) {
					t.Errorf("%s holds %q (%v), want %q", c.path, b, err, c.content)
				}
			}
			if tc.wantOut != "" {
				if got := tj.output(t); got != tc.wantOut {
					t.Errorf("output %q, want %q", got, tc.wantOut)
				}
			}
		})
	}
}

// TestStopWhileOpeningFiles: a launch whose files take forever to open (a
// hung file system, simulated by blocking before the open) still obeys
// cancel and its time limit; before, the shim waited in the open and the
// job stayed RUNNING past both.
func TestStopWhileOpeningFiles(t *testing.T) {
	release := make(chan struct{})
	restore := shim.SetOpeningHook(func() { <-release })
	defer restore()
	defer close(release)
	t.Run("cancel", func(t *testing.T) {
		tj := mustJob(t, "echo never\n", nil)
		cancel := make(chan struct{})
		time.AfterFunc(100*time.Millisecond, func() { close(cancel) })
		r := runWatched(t, tj, shim.Controls{Cancel: cancel})
		if r.State != api.StateCancelled {
			t.Errorf("result %+v, want CANCELLED", r)
		}
	})
	t.Run("time limit", func(t *testing.T) {
		tj := mustJob(t, "echo never\n", func(j *shim.Job) { j.Launch.TimeLimit = 1 })
		r := runWatched(t, tj, shim.Controls{})
		if r.State != api.StateTimeout || !strings.Contains(r.Message, "time limit") {
			t.Errorf("result %+v, want TIMEOUT", r)
		}
	})
}

// TestStdioLeavesNoFDs: the job gets its files on 0, 1 and 2 and nothing
// more: corral-init closes the fds they came on.
func TestStdioLeavesNoFDs(t *testing.T) {
	tj := mustJob(t, "ls /proc/self/fd | sort -n | tr '\\n' ' '; echo; readlink /proc/self/fd/1\n", nil)
	if r := tj.run(t, shim.Controls{}); r.State != api.StateCompleted {
		t.Fatalf("result %+v", r)
	}
	out := tj.output(t)
	// 0 1 2, and 3 is ls's own directory fd.
	if first := strings.SplitN(out, "\n", 2)[0]; first != "0 1 2 3 " {
		t.Errorf("the job's open fds: %q, want 0 1 2 (and ls's 3)", first)
	}
	if !strings.Contains(out, fmt.Sprintf("corral-%d.out", tj.job.Launch.JobID)) {
		t.Errorf("fd 1 is not the output file: %q", out)
	}
}

// TestStopWhileCheckingHome: a launch whose home does not answer (an NFS
// home whose server is gone, simulated by blocking before its stat)
// still obeys cancel and its time limit: the home is looked at on the
// goroutine that opens the job's files, no longer on the launch's path.
func TestStopWhileCheckingHome(t *testing.T) {
	release := make(chan struct{})
	restore := shim.SetHomeHook(func() { <-release })
	defer restore()
	defer close(release)
	home := func(j *shim.Job) {
		j.Launch.Home = containertest.MustUserDir(t, containertest.Nobody, containertest.Nobody)
	}
	t.Run("cancel", func(t *testing.T) {
		tj := mustJob(t, "echo never\n", home)
		cancel := make(chan struct{})
		time.AfterFunc(100*time.Millisecond, func() { close(cancel) })
		r := runWatched(t, tj, shim.Controls{Cancel: cancel})
		if r.State != api.StateCancelled {
			t.Errorf("result %+v, want CANCELLED", r)
		}
	})
	t.Run("time limit", func(t *testing.T) {
		tj := mustJob(t, "echo never\n", func(j *shim.Job) { home(j); j.Launch.TimeLimit = 1 })
		r := runWatched(t, tj, shim.Controls{})
		if r.State != api.StateTimeout || !strings.Contains(r.Message, "time limit") {
			t.Errorf("result %+v, want TIMEOUT", r)
		}
	})
}

// TestHomeBind: a home apart from the work directory is bound writable
// when the user reaches it; one only root reaches (below a 0700 root
// directory, as a root-squashed NFS is the other way round) is not bound
// and the job runs without it.
func TestHomeBind(t *testing.T) {
	containertest.MustRoot(t)
	home := containertest.MustUserDir(t, containertest.Nobody, containertest.Nobody)
	hidden := filepath.Join(containertest.MustStateDir(t), "private")
	os.MkdirAll(filepath.Join(hidden, "home"), 0o700)
	os.Chown(filepath.Join(hidden, "home"), containertest.Nobody, containertest.Nobody)
	for _, c := range []struct {
		home, want string
	}{{home, "home-writable"}, {filepath.Join(hidden, "home"), "no-home"}} {
		tj := mustJob(t, `(echo x > "$HOME/f") 2>/dev/null && echo home-writable || echo no-home`+"\n",
			func(j *shim.Job) { j.Launch.Home = c.home })
		if r := tj.run(t, shim.Controls{}); r.State != api.StateCompleted {
			t.Fatalf("%s: %+v", c.home, r)
		}
		if out := strings.TrimSpace(tj.output(t)); out != c.want {
			t.Errorf("home %s: %q, want %q", c.home, out, c.want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(home, "f")); err != nil || string(b) != "x\n" {
		t.Errorf("the file written in the home: %q %v", b, err)
	}
}
