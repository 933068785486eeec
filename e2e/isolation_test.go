package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// The hostile-job suite: jobs, mostly run as an unprivileged user, try
// what a job must not do. Every attempt prints one "what verdict" line;
// the test reads the lines back and checks that each attempt failed and
// that the node and the jobs beside the attacker were unaffected.

// isolationPids is the node's per-job process limit in this suite: low,
// so the fork bomb meets it quickly.
const isolationPids = 96

// probeScript reports a job's identity and confinement and tries to read
// the cluster key, write under /etc, mount, make namespaces and reach a
// device outside the allow-list. %[1]s: the node's key file; %[2]s: a
// copy of it the job can see; %[3]s: a file in the host's /tmp.
const probeScript = `#!/bin/sh
echo "id $(id -u) $(id -g) $(id -G)"
grep -E '^(NoNewPrivs|Seccomp|CapInh|CapPrm|CapEff|CapBnd|CapAmb):' /proc/self/status | tr -d ' \t' | tr ':' ' '
cat %[1]s >/dev/null 2>&1 && echo key leaked || echo key denied
cat %[2]s >/dev/null 2>&1 && echo keycopy leaked || echo keycopy denied
[ -e %[3]s ] && echo hosttmp visible || echo hosttmp private
touch /etc/corral-hostile 2>/dev/null && echo etc written || echo etc denied
(echo x >> /etc/passwd) 2>/dev/null && echo passwd written || echo passwd denied
mount -o remount,rw /etc 2>/dev/null && echo remount done || echo remount denied
mount -t tmpfs none /mnt 2>/dev/null && echo mount done || echo mount denied
unshare -Urm sh -c 'mount -t tmpfs none /mnt' 2>/dev/null && echo userns-mount done || echo userns-mount denied
echo "devs $(ls /dev | tr '\n' ' ')"
mknod /dev/corral-mem c 1 1 2>/dev/null; head -c 1 /dev/corral-mem >/dev/null 2>&1 && echo devmem read || echo devmem denied
`

// victimScript keeps a process alive, publishes its PID in the shared
// submit directory, leaves secrets in its /tmp and /dev/shm, and once the
// attacker is done (or after 40 s) reports whether that process lived.
const victimScript = `#!/bin/sh
echo secret > /tmp/victim-secret; echo secret > /dev/shm/victim-secret
sleep 30.31 &
echo $! > victim.pid
i=0; while [ ! -e attack.done ] && [ $i -lt 400 ]; do sleep 0.1; i=$((i+1)); done
[ -e attack.done ] && echo attack seen || echo attack missing
kill -0 $! 2>/dev/null && echo victim alive || echo victim dead
kill $!
`

// attackerScript tries to kill the victim by its PID as the victim saw
// it, by its host PID, and by killing everything it can, then looks for
// the victim's secrets.
const attackerScript = `#!/bin/sh
hp=$(cat victim.hostpid)
[ -e /proc/$hp ] && echo hostpid visible || echo hostpid invisible
kill -KILL "$hp" 2>/dev/null && echo hostkill done || echo hostkill denied
vp=$(cat victim.pid)
# PID numbers restart in every job's namespace (and corral-init's threads
# use the first ones), so the victim's number may be one of the attacker's
# own processes here, even its shell: that process is not the victim, and
# killing it would only end the attacker early.
[ -e /proc/$vp ] || kill -KILL "$vp" 2>/dev/null; echo nskill tried
kill -KILL -1 2>/dev/null; echo killall tried
[ -e /tmp/victim-secret ] && echo tmp shared || echo tmp private
[ -e /dev/shm/victim-secret ] && echo shm shared || echo shm private
echo "procs $(ls /proc | grep -c '^[0-9]')"
: > attack.done
`

// bombScript forks until the pids limit stops it: every child forks
// twice more and waits, so the number of processes grows fast. The
// parent gives up after 20 refused forks and prints what it managed.
const bombScript = `#!/bin/sh
perl -e '
my ($made, $failed) = (0, 0);
while ($failed < 20) {
  my $p = fork();
  if (!defined $p) { $failed++; select(undef, undef, undef, 0.02); next }
  if ($p == 0) { fork(); fork(); sleep 30; exit 0 }
  $made++;
  last if $made > 5000;
}
print "bomb $made $failed\n";
'
echo after-bomb ok
: > bomb.done
`

// calmScript runs beside the fork bomb and the memory hog until the bomb
// is over (at most 40 s), forking all along.
const calmScript = `#!/bin/sh
i=0; while [ ! -e bomb.done ] && [ $i -lt 400 ]; do sleep 0.1; i=$((i+1)); done
[ -e bomb.done ] && echo calm saw-bomb || echo calm no-bomb
`

func TestHostileJobs(t *testing.T) {
	needRoot(t)
	// Without these the attempts would fail for want of a program and
	// prove nothing.
	for _, tool := range []string{"perl", "unshare", "mount", "mknod", "id"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s on the host: the hostile jobs run it", tool)
		}
	}
	// A node name of its own keeps the job cgroups apart from other
	// suites' clusters that may run on this host at the same time.
	c := StartCluster(t, ClusterOpts{Nodes: []NodeOpts{{Name: "hostile", CPUs: 6, Mem: "3G",
		Args: []string{"--max-pids", strconv.Itoa(isolationPids)}}}})
	dir := jobDir(t)
	// t.TempDir's parent is 0700; the job users must pass through it.
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(c.Dir, "ctld", "cluster.key")
	keyCopy := mustVisibleKeyCopy(t, key)
	hostTmp := mustHostTmpFile(t)
	groupUser := userWithGroups(t)
	probe := writeJobScript(t, dir, "probe.sh", fmt.Sprintf(probeScript, key, keyCopy, hostTmp))

	// Phase 1: the probes, and a victim with an attacker beside it.
	probes := map[string]uint64{
		"nobody": c.Submit(dir, "--uid", "65534", "-t", "1", "-c", "1", "-o", "probe-nobody.out", probe),
		"group":  c.Submit(dir, "--uid", groupUser.Uid, "-t", "1", "-c", "1", "-o", "probe-group.out", probe),
		"root":   c.Submit(dir, "-t", "1", "-c", "1", "-o", "probe-root.out", probe),
	}
	victim := c.Submit(dir, "--uid", "65534", "-t", "1", "-c", "1", "-o", "victim.out", writeJobScript(t, dir, "victim.sh", victimScript))
	hostPid := waitVictimHostPid(t, c, dir, victim)
	writeFile(t, filepath.Join(dir, "victim.hostpid"), strconv.Itoa(hostPid)+"\n")
	attacker := c.Submit(dir, "--uid", "65534", "-t", "1", "-c", "1", "-o", "attacker.out", writeJobScript(t, dir, "attacker.sh", attackerScript))

	for who, id := range probes {
		mustComplete(t, c, id, "probe as "+who)
	}
	checkProbe(t, "nobody", mustVerdicts(t, filepath.Join(dir, "probe-nobody.out")), lookupUser(t, "65534"))
	checkProbe(t, "group", mustVerdicts(t, filepath.Join(dir, "probe-group.out")), groupUser)
	checkProbe(t, "root", mustVerdicts(t, filepath.Join(dir, "probe-root.out")), lookupUser(t, "0"))

	mustComplete(t, c, attacker, "attacker")
	mustComplete(t, c, victim, "victim")
	expectVerdicts(t, "attacker", mustVerdicts(t, filepath.Join(dir, "attacker.out")), map[string]string{
		"hostpid": "invisible", "hostkill": "denied", "nskill": "tried", "killall": "tried",
		"tmp": "private", "shm": "private",
	})
	if v := mustVerdicts(t, filepath.Join(dir, "attacker.out"))["procs"]; v == "" || mustAtoi(t, v) > 6 {
		t.Errorf("attacker sees %q processes; want only its own few", v)
	}
	expectVerdicts(t, "victim", mustVerdicts(t, filepath.Join(dir, "victim.out")), map[string]string{"victim": "alive", "attack": "seen"})

	// Phase 2: a fork bomb and a memory hog beside a calm job.
	calm := c.Submit(dir, "--uid", "65534", "-t", "1", "-c", "1", "-o", "calm.out", writeJobScript(t, dir, "calm.sh", calmScript))
	c.WaitState(calm, api.StateRunning, 15*time.Second)
	bomb := c.Submit(dir, "--uid", "65534", "-t", "1", "-c", "1", "--mem", "512M", "-o", "bomb.out",
		writeJobScript(t, dir, "bomb.sh", bombScript))
	hog := c.Submit(dir, "--uid", "65534", "-t", "1", "-c", "1", "--mem", "128M", "-o", "hog.out",
		"--wrap", "head -c 600M /dev/zero | tail")
	mustComplete(t, c, bomb, "fork bomb")
	bv := mustVerdicts(t, filepath.Join(dir, "bomb.out"))
	made, failed, _ := strings.Cut(bv["bomb"], " ")
	if bv["bomb"] == "" || mustAtoi(t, made) >= isolationPids || mustAtoi(t, failed) == 0 {
		t.Errorf("fork bomb reported %q (made, refused); want fewer than %d made and refusals", bv["bomb"], isolationPids)
	}
	if bv["after-bomb"] != "ok" {
		t.Error("the bomb's script did not carry on after the pids limit")
	}
	if j := c.WaitEnded(hog, 30*time.Second); j.State != api.StateOutOfMemory {
		t.Errorf("memory hog ended %s, want OUT_OF_MEMORY", j.State)
	}
	mustComplete(t, c, calm, "job beside the bomb and the hog")
	if got := mustLines(t, filepath.Join(dir, "calm.out")); !slices.Equal(got, []string{"calm saw-bomb"}) {
		t.Errorf("calm job printed %q", got)
	}

	// Phase 3: the node is up and runs a fresh job; nothing was written
	// to the host's /etc.
	fresh := c.Submit(dir, "--uid", "65534", "-t", "1", "-o", "fresh.out", "--wrap", "echo fresh")
	mustComplete(t, c, fresh, "fresh job after the suite")
	if got := mustLines(t, filepath.Join(dir, "fresh.out")); !slices.Equal(got, []string{"fresh"}) {
		t.Errorf("fresh job printed %q", got)
	}
	if _, err := os.Stat("/etc/corral-hostile"); !os.IsNotExist(err) {
		t.Error("/etc/corral-hostile exists on the host")
	}
	for _, n := range mustNodes(t, c) {
		if n.State == api.NodeDown {
			t.Errorf("node %s is %s after the suite", n.Name, n.State)
		}
	}
}

// checkProbe checks one probe job's report against the user it ran as.
func checkProbe(t *testing.T, who string, v map[string]string, u *user.User) {
	t.Helper()
	const none = "0000000000000000"
	want := map[string]string{
		"NoNewPrivs": "1", "Seccomp": "2", "CapInh": none, "CapAmb": none,
		"key": "denied", "hosttmp": "private", "etc": "denied", "passwd": "denied", "remount": "denied",
		"mount": "denied", "userns-mount": "denied", "devmem": "denied",
	}
	if u.Uid != "0" {
		// No capability at all, and a copy of the key in plain sight
		// stays unreadable. (Root may read it: its caps override file
		// modes, which is why noded hides the real key from every job.)
		for _, s := range []string{"CapPrm", "CapEff", "CapBnd"} {
			want[s] = none
		}
		want["keycopy"] = "denied"
	} else {
		for _, s := range []string{"CapPrm", "CapEff", "CapBnd"} {
			caps, err := strconv.ParseUint(v[s], 16, 64)
			const sysAdmin, sysModule, sysPtrace, sysRawio = 21, 16, 19, 17
			if err != nil || caps&(1<<sysAdmin|1<<sysModule|1<<sysPtrace|1<<sysRawio) != 0 {
				t.Errorf("%s: %s %q holds a capability that administers the host", who, s, v[s])
			}
		}
	}
	expectVerdicts(t, who, v, want)

	ids := strings.Fields(v["id"])
	wantGroups, err := u.GroupIds()
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) < 3 || ids[0] != u.Uid || ids[1] != u.Gid {
		t.Errorf("%s: job ran as %q, want uid %s gid %s", who, v["id"], u.Uid, u.Gid)
	} else if got := ids[2:]; !sameSet(got, wantGroups) {
		t.Errorf("%s: job groups %v, want %v (the user's)", who, got, wantGroups)
	}
	allowed := []string{"null", "zero", "full", "tty", "random", "urandom", "fd", "stdin", "stdout", "stderr",
		"ptmx", "pts", "shm", "mqueue", "core", "console"}
	for _, d := range strings.Fields(v["devs"]) {
		if !slices.Contains(allowed, d) {
			t.Errorf("%s: /dev/%s is in the job's /dev; want only the default devices", who, d)
		}
	}
}

func expectVerdicts(t *testing.T, who string, got, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %s = %q, want %q", who, k, got[k], w)
		}
	}
}

// mustVerdicts reads "what verdict..." lines into a map.
func mustVerdicts(t *testing.T, path string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, l := range mustLines(t, path) {
		k, v, _ := strings.Cut(l, " ")
		m[k] = v
	}
	return m
}

func mustLines(t *testing.T, path string) []string { t.Helper(); return readLines(t, path) }

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}

// mustComplete waits for a job and fails the test unless it COMPLETED.
func mustComplete(t *testing.T, c *Cluster, id uint64, what string) {
	t.Helper()
	j := c.WaitEnded(id, 45*time.Second)
	if j.State != api.StateCompleted {
		t.Errorf("%s (job %d) ended %s exit %d signal %d: %s", what, id, j.State, derefExit(j.ExitCode), j.Signal, j.Message)
	}
}

func mustNodes(t *testing.T, c *Cluster) []api.Node {
	t.Helper()
	nodes, err := c.Client.Nodes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

func writeJobScript(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	writeFile(t, p, text)
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// mustVisibleKeyCopy copies the cluster key to a directory every job
// sees (the host's /var/tmp, read-only in jobs), root-owned with mode
// 0600, so only the file's mode and the job's missing capabilities stand
// between a user's job and the key.
func mustVisibleKeyCopy(t *testing.T, key string) string {
	t.Helper()
	b, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	d, err := os.MkdirTemp("/var/tmp", "corral-iso-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(d, "cluster.key")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// mustHostTmpFile creates a world-readable file in the host's /tmp.
func mustHostTmpFile(t *testing.T) string {
	t.Helper()
	f, err := os.CreateTemp("/tmp", "corral-iso-host-")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	t.Cleanup(func() { os.Remove(f.Name()) })
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// waitVictimHostPid waits for the victim's published PID and returns the
// host PID of its sleep, found by its unique command line.
func waitVictimHostPid(t *testing.T, c *Cluster, dir string, victim uint64) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join(dir, "victim.pid")); err == nil && len(b) > 0 {
			ents, _ := os.ReadDir("/proc")
			for _, e := range ents {
				pid, err := strconv.Atoi(e.Name())
				if err != nil {
					continue
				}
				if cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); string(cmd) == "sleep\x0030.31\x00" {
					return pid
				}
			}
		}
		if j := c.Job(victim); j.State.Terminal() {
			t.Fatalf("victim ended %s before the attack: %s", j.State, j.Message)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the victim's process did not show up")
	return 0
}

// userWithGroups returns a user other than root with supplementary
// groups, so the job's group list is checked for real; nobody if the
// host has none.
func userWithGroups(t *testing.T) *user.User {
	t.Helper()
	f, err := os.Open("/etc/group")
	if err == nil {
		defer f.Close()
		s := bufio.NewScanner(f)
		for s.Scan() {
			fs := strings.Split(s.Text(), ":")
			if len(fs) < 4 || fs[3] == "" {
				continue
			}
			for _, name := range strings.Split(fs[3], ",") {
				if u, err := user.Lookup(name); err == nil && u.Uid != "0" {
					t.Logf("checking groups with user %s (uid %s)", u.Username, u.Uid)
					return u
				}
			}
		}
	}
	t.Log("no user with supplementary groups on this host; checking groups with nobody")
	return lookupUser(t, "65534")
}

func lookupUser(t *testing.T, uid string) *user.User {
	t.Helper()
	u, err := user.LookupId(uid)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

func derefExit(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}
