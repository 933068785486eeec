package shim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/noded/shim"
)

var (
	initPath string
	host     *cgroup.Host
	node     = "shimtest" + strconv.Itoa(os.Getpid())
	nextID   atomic.Uint64
)

// asShim makes the test binary corral-shim itself (shim.Main), for tests
// that run it as noded does.
const asShim = "CORRAL_SHIM_TEST_AS_MAIN"

// execTasks makes such a runner start its tasks by libcontainer's exec,
// as for a container whose corral-init has no spawn socket.
const execTasks = "CORRAL_SHIM_TEST_EXEC_TASKS"

func TestMain(m *testing.M) {
	containertest.DispatchInit()
	if os.Getenv(asShim) == "1" {
		if os.Getenv(execTasks) == "1" {
			shim.ExecTasksOnly()
		}
		os.Exit(shim.Main(os.Args[1:]))
	}
	code := func() int {
		if os.Geteuid() == 0 {
			p, cleanup, err := containertest.BuildInit()
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			defer cleanup()
			initPath = p
			if host, err = cgroup.Detect(); err == nil {
				err = host.Prepare(cgroup.LeafName(node))
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		return m.Run()
	}()
	os.Exit(code)
}

// testJob is one job set up on disk, ready for shim.Run.
type testJob struct {
	dir, state, work string
	job              *shim.Job
	place            cgroup.Placement
}

// mustJob lays out a job directory for a job running script as nobody
// with 1 CPU and 256M; edit adjusts the job before launch.json is written.
func mustJob(t testing.TB, script string, edit func(*shim.Job)) *testJob {
	t.Helper()
	containertest.MustRoot(t)
	state := containertest.MustStateDir(t)
	work := containertest.MustUserDir(t, containertest.Nobody, containertest.Nobody)
	id := nextID.Add(1)
	place, err := host.Job(node, id)
	if err != nil {
		t.Fatal(err)
	}
	j := &shim.Job{
		Launch: api.LaunchRequest{
			JobID: id, Name: "t" + strconv.FormatUint(id, 10), Partition: "debug", User: "nobody",
			UID: containertest.Nobody, GID: containertest.Nobody, Groups: []uint32{containertest.Nobody, 100},
			Home: work, Script: script, WorkDir: work, Env: []string{"PATH=/usr/bin:/bin", "FROM_SUBMIT=yes", "HOME=/wrong"},
			CPUs: 1, MemBytes: 256 << 20, NodeList: []string{node},
		},
		Node: node, Cpuset: "0", Slots: []int{0}, MaxPids: 256, KillWaitMs: 300,
		InitPath: initPath, RuncRoot: filepath.Join(state, "runc"), CgroupPath: place.Path,
		Hide: []string{state},
	}
	if edit != nil {
		edit(j)
	}
	dir := filepath.Join(state, "jobs", strconv.FormatUint(id, 10))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := shim.WriteJob(dir, j); err != nil {
		t.Fatal(err)
	}
	return &testJob{dir: dir, state: state, work: work, job: j, place: place}
}

// run runs the job to its end and checks that it left nothing behind.
func (tj *testJob) run(t *testing.T, ctl shim.Controls) *shim.Result {
	t.Helper()
	r := shim.Run(tj.dir, ctl)
	tj.mustBeClean(t)
	return r
}

func (tj *testJob) mustBeClean(t testing.TB) {
	t.Helper()
	leaks := containertest.Leaks(tj.place.Dirs, []string{tj.state, tj.work}, cgroup.JobName(node, tj.job.Launch.JobID))
	for _, p := range []string{shim.ScriptFile, shim.RootfsDir} {
		if _, err := os.Stat(filepath.Join(tj.dir, p)); !os.IsNotExist(err) {
			leaks = append(leaks, "job dir: "+p)
		}
	}
	if _, err := os.Stat(filepath.Join(tj.job.RuncRoot, shim.ContainerID(tj.job.Launch.JobID))); !os.IsNotExist(err) {
		leaks = append(leaks, "libcontainer state")
	}
	if len(leaks) > 0 {
		t.Errorf("job %d left behind: %v", tj.job.Launch.JobID, leaks)
	}
}

func (tj *testJob) output(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(tj.work, fmt.Sprintf("corral-%d.out", tj.job.Launch.JobID)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// 1. A job sees its own limits under /sys/fs/cgroup.
func TestJobSeesItsLimits(t *testing.T) {
	script := `#!/bin/sh
cg=/sys/fs/cgroup
if [ -f $cg/memory.max ]; then
  cat $cg/memory.max; cut -d' ' -f1 $cg/cpu.max; cat $cg/cpuset.cpus
else
  cat $cg/memory/memory.limit_in_bytes $cg/cpu/cpu.cfs_quota_us $cg/cpuset/cpuset.cpus
fi
`
	tj := mustJob(t, script, nil)
	r := tj.run(t, shim.Controls{})
	if r.State != api.StateCompleted {
		t.Fatalf("result %+v\noutput: %s", r, tj.output(t))
	}
	if got, want := tj.output(t), "268435456\n100000\n0\n"; got != want {
		t.Errorf("job saw limits %q, want %q", got, want)
	}
	if r.PeakMemBytes <= 0 || r.CPUTimeUsec <= 0 || r.Start.IsZero() || r.End.Before(r.Start) {
		t.Errorf("usage/times not reported: %+v", r)
	}
}

// 2. A job that outgrows its memory ends OUT_OF_MEMORY; one beside it is
// unaffected.
func TestOutOfMemoryBesideNormalJob(t *testing.T) {
	hog := mustJob(t, "head -c 600M /dev/zero | tail\n", nil)
	calm := mustJob(t, "sleep 0.3; echo calm\n", nil)
	var wg sync.WaitGroup
	results := make([]*shim.Result, 2)
	for i, tj := range []*testJob{hog, calm} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = tj.run(t, shim.Controls{})
		}()
	}
	wg.Wait()
	if r := results[0]; r.State != api.StateOutOfMemory || r.OOMKills < 1 {
		t.Errorf("hog: %+v, want OUT_OF_MEMORY", r)
	}
	if r := results[0]; r.PeakMemBytes < 200<<20 || r.PeakMemBytes > 256<<20 {
		t.Errorf("hog peak memory %d, want close to the 256M limit", r.PeakMemBytes)
	}
	if r := results[1]; r.State != api.StateCompleted || calm.output(t) != "calm\n" {
		t.Errorf("calm job: %+v output %q", r, calm.output(t))
	}
}

// 3. Time limit and cancel, with and without a job that ignores SIGTERM.
func TestTimeoutAndCancel(t *testing.T) {
	const killWait = 300 * time.Millisecond
	tests := []struct {
		name       string
		script     string
		timeLimit  int64
		cancel     bool
		wantState  api.JobState
		wantSignal int
		minTook    time.Duration
	}{
		{name: "timeout, TERM obeyed", script: "sleep 100\n", timeLimit: 1,
			wantState: api.StateTimeout, wantSignal: 15, minTook: time.Second},
		{name: "timeout, TERM ignored needs KILL", script: "trap '' TERM\nsleep 100\n", timeLimit: 1,
			wantState: api.StateTimeout, wantSignal: 9, minTook: time.Second + killWait},
		{name: "cancel, TERM obeyed", script: "sleep 100\n", cancel: true,
			wantState: api.StateCancelled, wantSignal: 15},
		{name: "cancel, TERM ignored needs KILL", script: "trap '' TERM\nsleep 100\n", cancel: true,
			wantState: api.StateCancelled, wantSignal: 9, minTook: killWait},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tj := mustJob(t, tc.script, func(j *shim.Job) {
				j.Launch.TimeLimit = tc.timeLimit
				j.KillWaitMs = killWait.Milliseconds()
			})
			cancel := make(chan struct{})
			var startedAt time.Time
			r := tj.run(t, shim.Controls{Cancel: cancel, Started: func(at time.Time) {
				startedAt = at
				if tc.cancel {
					// Let the shell install its trap before the signal.
					time.AfterFunc(200*time.Millisecond, func() { close(cancel) })
				}
			}})
			took := r.End.Sub(r.Start)
			if r.State != tc.wantState || r.Signal != tc.wantSignal {
				t.Errorf("state %s signal %d, want %s signal %d (%+v)", r.State, r.Signal, tc.wantState, tc.wantSignal, r)
			}
			if startedAt.IsZero() || !startedAt.Equal(r.Start) {
				t.Errorf("Started callback at %v, result start %v", startedAt, r.Start)
			}
			// Ends no earlier than the limit (plus kill wait when TERM is
			// ignored) and well before the script's own 100 s.
			if took < tc.minTook || took > tc.minTook+10*time.Second {
				t.Errorf("took %v, want about %v", took, tc.minTook)
			}
		})
	}
}

// 4. Identity, file system view, /tmp, /dev/shm and environment.
func TestJobViewAndEnvironment(t *testing.T) {
	hostTmp, err := os.MkdirTemp("/tmp", "corral-host-only-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(hostTmp)
	script := `id -u; id -G
touch /etc/corral-job-test 2>/dev/null && echo etc-writable || echo etc-readonly
echo w > "$CORRAL_SUBMIT_DIR/w" && echo work-writable
echo t > /tmp/t && echo tmp-writable
[ -e "` + hostTmp + `" ] && echo host-tmp-visible || echo tmp-private
df -k /dev/shm | awk 'NR==2 {print $2}'
echo "$CORRAL_JOB_ID $SLURM_JOB_ID $SLURM_CPUS_PER_TASK $SLURM_MEM_PER_NODE $SLURM_JOB_NODELIST $SLURM_NTASKS $SLURM_JOB_USER $SLURM_JOB_UID"
echo "$FROM_SUBMIT $HOME $USER $TMPDIR $CORRAL_PARTITION"
echo "$0 $1 $2"
`
	tj := mustJob(t, script, func(j *shim.Job) {
		j.Launch.ShmBytes = 32 << 20
		j.Launch.Args = []string{"a1", "a 2"}
	})
	r := tj.run(t, shim.Controls{})
	if r.State != api.StateCompleted {
		t.Fatalf("result %+v\n%s", r, tj.output(t))
	}
	id := tj.job.Launch.JobID
	want := []string{
		"65534", "65534 100", "etc-readonly", "work-writable", "tmp-writable", "tmp-private", "32768",
		fmt.Sprintf("%d %d 1 256 %s 1 nobody 65534", id, id, node),
		fmt.Sprintf("yes %s nobody /tmp debug", tj.work),
		"/.corral/script a1 a 2",
	}
	if got := strings.Split(strings.TrimSpace(tj.output(t)), "\n"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("job saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// 5. Output files are created as the user, with patterns expanded; output
// that cannot be created fails the job with a message.
func TestOutputFiles(t *testing.T) {
	t.Run("patterns, owner, separate stderr", func(t *testing.T) {
		tj := mustJob(t, "echo out; echo err >&2\n", func(j *shim.Job) {
			j.Launch.Output = "o-%j-%x-%u-%N-%n-%%.txt"
			j.Launch.Error = "e-%j.txt"
		})
		if r := tj.run(t, shim.Controls{}); r.State != api.StateCompleted {
			t.Fatalf("result %+v", r)
		}
		l := tj.job.Launch
		out := filepath.Join(tj.work, fmt.Sprintf("o-%d-%s-nobody-%s-0-%%.txt", l.JobID, l.Name, node))
		errf := filepath.Join(tj.work, fmt.Sprintf("e-%d.txt", l.JobID))
		for path, want := range map[string]string{out: "out\n", errf: "err\n"} {
			b, err := os.ReadFile(path)
			if err != nil || string(b) != want {
				t.Errorf("%s = %q, %v; want %q", path, b, err, want)
				continue
			}
			if owner := fileOwner(t, path); owner != containertest.Nobody {
				t.Errorf("%s is owned by %d, want the job's user", path, owner)
			}
		}
	})
	t.Run("existing output is truncated", func(t *testing.T) {
		tj := mustJob(t, "echo new\n", nil)
		old := filepath.Join(tj.work, fmt.Sprintf("corral-%d.out", tj.job.Launch.JobID))
		os.WriteFile(old, []byte("old old old old\n"), 0o644)
		os.Chown(old, containertest.Nobody, containertest.Nobody)
		tj.run(t, shim.Controls{})
		if got := tj.output(t); got != "new\n" {
			t.Errorf("output %q, want it truncated to %q", got, "new\n")
		}
	})
	failures := []struct {
		name, want string
		edit       func(t *testing.T, j *shim.Job)
	}{
		{"output in a root-only directory", "cannot be created as the job's user", func(t *testing.T, j *shim.Job) {
			d := t.TempDir() // 0700 root
			j.Launch.Output = filepath.Join(d, "x.out")
		}},
		{"missing work directory", "work directory", func(t *testing.T, j *shim.Job) {
			j.Launch.WorkDir = "/nonexistent/corral/work"
		}},
		{"corral-init cannot run the script", "corral-init", func(t *testing.T, j *shim.Job) {
			j.Launch.Script = "#!/nonexistent/interpreter\n"
		}},
	}
	for _, tc := range failures {
		t.Run(tc.name, func(t *testing.T) {
			tj := mustJob(t, "echo never\n", func(j *shim.Job) { tc.edit(t, j) })
			r := tj.run(t, shim.Controls{})
			if r.State != api.StateFailed || r.ExitCode == 0 || !strings.Contains(r.Message, tc.want) {
				t.Errorf("result %+v, want FAILED mentioning %q", r, tc.want)
			}
		})
	}
}

func fileOwner(t *testing.T, path string) int {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return int(st.Uid)
}

// TestExitCodes: plain exit codes and signals reach the result.
func TestExitCodes(t *testing.T) {
	tests := []struct {
		script     string
		wantState  api.JobState
		wantCode   int
		wantSignal int
	}{
		{"exit 0\n", api.StateCompleted, 0, 0},
		{"exit 3\n", api.StateFailed, 3, 0},
		{"kill -SEGV $$\n", api.StateFailed, 128 + 11, 11},
	}
	for _, tc := range tests {
		t.Run(tc.script, func(t *testing.T) {
			t.Parallel()
			r := mustJob(t, tc.script, nil).run(t, shim.Controls{})
			if r.State != tc.wantState || r.ExitCode != tc.wantCode || r.Signal != tc.wantSignal {
				t.Errorf("%+v, want %s %d/%d", r, tc.wantState, tc.wantCode, tc.wantSignal)
			}
		})
	}
}

// TestEndedBeforeScratchRemoval: Controls.Ended gets the final result
// once, after the container is gone (no libcontainer state, no cgroup)
// but while the job's script is still there to delete.
func TestEndedBeforeScratchRemoval(t *testing.T) {
	tj := mustJob(t, "exit 4\n", nil)
	var calls int
	var seen *shim.Result
	r := tj.run(t, shim.Controls{Ended: func(r *shim.Result) {
		calls++
		seen = r
		if _, err := os.Stat(filepath.Join(tj.dir, shim.ScriptFile)); err != nil {
			t.Errorf("the job's script is gone before Ended: %v", err)
		}
		if _, err := os.Stat(filepath.Join(tj.job.RuncRoot, shim.ContainerID(tj.job.Launch.JobID))); !os.IsNotExist(err) {
			t.Errorf("the container is still there at Ended (%v)", err)
		}
	}})
	if calls != 1 || seen != r || r.State != api.StateFailed || r.ExitCode != 4 {
		t.Errorf("Ended called %d times with %+v; Run returned %+v", calls, seen, r)
	}
	bad := mustJob(t, "true\n", func(j *shim.Job) { j.Launch.WorkDir = "relative" })
	calls = 0
	if r := bad.run(t, shim.Controls{Ended: func(*shim.Result) { calls++ }}); calls != 1 || r.State != api.StateFailed {
		t.Errorf("a job that cannot start: Ended called %d times, result %+v", calls, r)
	}
}
