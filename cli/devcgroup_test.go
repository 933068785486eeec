package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeCgroup2 is a directory shaped like a cgroup2 mount's root with the
// given controllers available.
func fakeCgroup2(t *testing.T, controllers string) string {
	t.Helper()
	root := t.TempDir()
	for name, data := range map[string]string{"cgroup.controllers": controllers + "\n", "cgroup.subtree_control": ""} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func readTrim(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestDevCgroups(t *testing.T) {
	for _, tc := range []struct {
		name, controllers, enabled, err string
	}{
		{"all", "cpuset cpu io memory hugetlb pids", "+memory +cpu +pids +cpuset", ""},
		{"no cpuset", "cpu io memory pids", "+memory +cpu +pids", ""},
		{"no pids", "cpuset cpu io memory", "", "the pids controller is not available"},
		{"no memory", "cpu pids", "", "the memory controller is not available"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fakeCgroup2(t, tc.controllers)
			g, err := makeDevCgroups(root, 42)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				if _, serr := os.Stat(filepath.Join(root, "corral-dev.42")); serr == nil {
					t.Error("a cgroup was made although the host cannot give noded its controllers")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := readTrim(t, filepath.Join(root, "cgroup.subtree_control")); got != tc.enabled {
				t.Errorf("root enables %q, want %q", got, tc.enabled)
			}
			if got := readTrim(t, filepath.Join(g.dir, "cgroup.subtree_control")); g.dir != filepath.Join(root, "corral-dev.42") || got != tc.enabled {
				t.Errorf("%s enables %q, want %q", g.dir, got, tc.enabled)
			}
			f, err := g.forNode("dev1")
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			if st, err := os.Stat(filepath.Join(g.dir, "dev1")); err != nil || !st.IsDir() {
				t.Errorf("no cgroup for node dev1: %v", err)
			}
			// A real cgroup directory can be removed with its interface
			// files; this fake one keeps cgroup.subtree_control, so the
			// parent is reported as left over, the node's empty one goes.
			err = g.remove()
			if err == nil || !strings.Contains(err.Error(), g.dir) {
				t.Errorf("remove: %v, want the non-empty %s named", err, g.dir)
			}
			if _, serr := os.Stat(filepath.Join(g.dir, "dev1")); serr == nil {
				t.Error("the node's empty cgroup was not removed")
			}
		})
	}
	var none *devCgroups // v1 and hybrid hosts
	if f, err := none.forNode("dev1"); f != nil || err != nil || none.remove() != nil {
		t.Errorf("no cgroups: forNode %v %v", f, err)
	}
}
