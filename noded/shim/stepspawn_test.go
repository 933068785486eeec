package shim_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/noded/shim"
)

// TestSpawnedTaskAsExeced: a task corral-init spawns is in the job's
// container exactly as one libcontainer execs, for an ordinary job and a
// root one (the way before the spawn
// socket, still taken for a container without one): the same user, groups,
// capabilities (none), no_new_privs, seccomp filter, cgroup, namespaces,
// umask, limits and working directory, and stdio pipes handed to the job's
// user (a task may reopen /dev/stdout). Only the parent differs: corral-init
// (PID 1) for the spawned task, the runner outside the container for the
// execed one.
func TestSpawnedTaskAsExeced(t *testing.T) {
	for _, tt := range []struct {
		name string
		uid  uint32
		want []string
	}{
		{"nobody", containertest.Nobody, []string{"Uid:\t65534\t65534\t65534\t65534", "CapEff:\t0000000000000000",
			"CapBnd:\t0000000000000000", "stdout 65534:"}},
		{"root", 0, []string{"Uid:\t0\t0\t0\t0", "CapInh:\t0000000000000000", "CapAmb:\t0000000000000000", "stdout 0:"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spawned := compareTasks(t, func(j *shim.Job) {
				if tt.uid == 0 {
					j.Launch.User, j.Launch.UID, j.Launch.GID, j.Launch.Groups = "root", 0, 0, []uint32{0}
				}
			})
			want := append(tt.want, "NoNewPrivs:\t1", "reopened")
			if container.SeccompEnabled {
				want = append(want, "Seccomp:\t2")
			}
			for _, w := range want {
				if !strings.Contains(spawned, w) {
					t.Errorf("the spawned task lacks %q:\n%s", w, spawned)
				}
			}
			if tt.uid == 0 && strings.Contains(spawned, "CapEff:\t0000000000000000") {
				t.Errorf("a root job's task holds no capabilities (want the root job's set):\n%s", spawned)
			}
		})
	}
}

// compareTasks runs the identity script in a job edited by edit, once
// spawned and once execed, checks both agree but for the parent, and
// returns the spawned task's output.
func compareTasks(t *testing.T, edit func(*shim.Job)) string {
	tj, end := startJob(t, `touch "$CORRAL_SUBMIT_DIR/ready"; exec sleep 1000`, edit)
	defer end()
	script := `grep -E '^(PPid|Uid|Gid|Groups|NoNewPrivs|Seccomp|Seccomp_filters|Cap(Inh|Prm|Eff|Bnd|Amb)):' /proc/$$/status
cat /proc/$$/cgroup
for n in pid mnt ipc uts cgroup net user; do readlink /proc/$$/ns/$n; done
umask; pwd; cat /proc/$$/limits /proc/$$/oom_score_adj
stat -L -c 'stdout %u:%g' /proc/$$/fd/1
echo reopened > /dev/stdout`
	run := func(step int, env ...string) string {
		srun := newFakeSrun(t, "tok", node)
		mustStep(t, tj, step, []int{0}, []string{"/bin/sh", "-c", script}, srun.ln.Addr().String())
		cmd, _ := startRunner(t, tj.dir, step, env...)
		srun.writer(t)
		got := srun.collect(t, nil)
		cmd.Wait()
		g := got[0]
		if g == nil || g.exit == nil || g.exit.Code != 0 || g.err != "" {
			t.Fatalf("step %d: %+v (exit %v)", step, g, exitOf(g))
		}
		return g.out
	}
	spawned, execed := run(0), run(1, execTasks+"=1")
	ppid := regexp.MustCompile(`(?m)^PPid:\s*(\d+)\n`)
	if m := ppid.FindStringSubmatch(spawned); m == nil || m[1] != "1" {
		t.Errorf("the spawned task's parent is %v, want corral-init (1):\n%s", m, spawned)
	}
	if m := ppid.FindStringSubmatch(execed); m == nil || m[1] != "0" {
		t.Errorf("the execed task's parent is %v, want one outside the container (0):\n%s", m, execed)
	}
	spawned, execed = ppid.ReplaceAllString(spawned, ""), ppid.ReplaceAllString(execed, "")
	if spawned != execed {
		t.Errorf("spawned task:\n%s\nexeced task:\n%s", spawned, execed)
	}
	return spawned
}
