package container_test

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/container/containertest"
	"golang.org/x/sys/unix"
)

// TestViewSameAsRunc: the host view Start mounts itself, before runc
// (inJobRoot), is the view runc made with one bind per top-level entry:
// the same mount table inside the job (mount points, file systems,
// sources, per-mount and super options, propagation, parents), the same
// top-level entries, and the same read-only places.
func TestViewSameAsRunc(t *testing.T) {
	containertest.MustRoot(t)
	hideDir, err := os.MkdirTemp("/var/tmp", "corral-hide-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(hideDir)
	// A writable host mount below a top-level entry: the view must make
	// it read-only too, as it does its parent.
	sub, err := os.MkdirTemp("/var/tmp", "corral-sub-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sub)
	if err := unix.Mount("tmpfs", sub, "tmpfs", 0, "mode=1777,size=64k"); err != nil {
		t.Fatal(err)
	}
	defer unix.Unmount(sub, unix.MNT_DETACH)
	script := `cat /proc/self/mountinfo; echo ==
for f in /* /.[!.]*; do printf '%s ' "$f"; stat -c '%F %a %u' "$f"; done; echo ==
for d in / /usr /etc /var /var/tmp "$SUB" /tmp "$WORK" /dev/shm /home /root; do touch "$d/.w" 2>/dev/null && echo "$d rw" || echo "$d ro"; done`
	run := func(byRunc bool) string {
		text, work := mustRunShellSpec(t, "vtest", containertest.Nobody, script, func(s *container.Spec) {
			s.Hide = []string{hideDir}
			s.Env = append(s.Env, "WORK="+s.Cwd, "SUB="+sub)
			if byRunc {
				container.BindViewByRunc(s)
			}
		})
		// Each run has a work directory of its own.
		return strings.ReplaceAll(normalizeMountinfo(t, text), work, "$WORK")
	}
	mine, runcs := run(false), run(true)
	if mine != runcs {
		a, b := strings.Split(mine, "\n"), strings.Split(runcs, "\n")
		t.Errorf("the job's view differs from runc's:\n%s", lineDiff(a, b))
	}
	for _, want := range []string{"\n/usr on ", "\n/usr ro\n", "\n" + sub + " ro\n", "\n$WORK rw\n"} {
		if !strings.Contains(mine, want) {
			t.Errorf("the job's view has no %q:\n%s", want, mine)
		}
	}
}

// normalizeMountinfo rewrites the mount table part of text (up to "==")
// without what differs between two identical containers: mount IDs (a
// parent is named by its mount point) and the minor numbers of
// anonymous file systems (tmpfs, proc, ...).
func normalizeMountinfo(t *testing.T, text string) string {
	parts := strings.SplitN(text, "==\n", 2)
	if len(parts) != 2 {
		t.Fatalf("no mount table in the job's output:\n%s", text)
	}
	at := map[string]string{}
	var rows [][]string
	for _, l := range strings.Split(strings.TrimSpace(parts[0]), "\n") {
		f := strings.Fields(l)
		if len(f) < 10 {
			t.Fatalf("mountinfo line %q", l)
		}
		at[f[0]] = f[4]
		rows = append(rows, f)
	}
	var out []string
	for _, f := range rows {
		dev := f[2]
		if strings.HasPrefix(dev, "0:") {
			dev = "0:x"
		}
		out = append(out, fmt.Sprintf("%s on %s (parent %s) %s", f[4], dev, at[f[1]], strings.Join(f[3:4], " ")+" "+strings.Join(f[5:], " ")))
	}
	return strings.Join(out, "\n") + "\n==\n" + parts[1]
}

// lineDiff lists the lines only one side has.
func lineDiff(a, b []string) string {
	count := map[string]int{}
	for _, l := range a {
		count[l]++
	}
	for _, l := range b {
		count[l]--
	}
	var d []string
	for l, n := range count {
		switch {
		case n > 0:
			d = append(d, "only mine: "+l)
		case n < 0:
			d = append(d, "only runc's: "+l)
		}
	}
	sort.Strings(d)
	if len(d) == 0 {
		return "(the same lines, in another order)"
	}
	return strings.Join(d, "\n")
}
