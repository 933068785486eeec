package noded

import (
	"bytes"
	"context"
	"log"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/noded/shim"
)

func TestCPUSlots(t *testing.T) {
	tests := []struct {
		name    string
		n       int
		cores   []int
		asks    []int
		want    []string // cpuset per ask; "" = refused
		freeEnd int
	}{
		{"one per core", 2, []int{0, 1}, []int{1, 1, 1}, []string{"0", "1", ""}, 0},
		{"two-CPU job", 4, []int{0, 1, 2, 3}, []int{2, 2}, []string{"0-1", "2-3"}, 0},
		{"oversubscribed spreads before doubling", 4, []int{0, 1}, []int{1, 1, 1, 1}, []string{"0", "1", "0", "1"}, 0},
		{"oversubscribed big job", 4, []int{0, 1}, []int{3}, []string{"0-1"}, 1},
		{"sparse affinity mask", 3, []int{1, 3, 4}, []int{3}, []string{"1,3-4"}, 0},
		{"too big never partly taken", 2, []int{0, 1}, []int{3, 2}, []string{"", "0-1"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCPUSlots(tc.n, tc.cores)
			var got []string
			for _, n := range tc.asks {
				slots, ok := c.alloc(n)
				if !ok {
					got = append(got, "")
					continue
				}
				got = append(got, c.cpuset(slots))
			}
			if !reflect.DeepEqual(got, tc.want) || c.free() != tc.freeEnd {
				t.Errorf("cpusets %q free %d, want %q free %d", got, c.free(), tc.want, tc.freeEnd)
			}
		})
	}
	c := newCPUSlots(2, []int{0, 1})
	s, _ := c.alloc(2)
	c.release(s)
	if c.free() != 2 {
		t.Errorf("release left %d free", c.free())
	}
}

func TestAdvertised(t *testing.T) {
	lo := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4321}
	tests := []struct {
		flag string
		ln   *net.TCPAddr
		want string
		err  bool
	}{
		{"", lo, "127.0.0.1:4321", false},
		{"http://node7:6818", lo, "node7:6818", false},
		{"node7:1", lo, "node7:1", false},
		{"node7", lo, "", true},
	}
	for _, tc := range tests {
		got, err := advertised(tc.flag, tc.ln)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("advertised(%q) = %q, %v; want %q", tc.flag, got, err, tc.want)
		}
	}
	if got, err := advertised("", &net.TCPAddr{IP: net.IPv4zero, Port: 9}); err != nil || !strings.HasSuffix(got, ":9") || strings.HasPrefix(got, "0.0.0.0") {
		t.Errorf("unspecified listen address advertised as %q, %v; want hostname:9", got, err)
	}
}

func TestConfigErrors(t *testing.T) {
	base := func() Config {
		return Config{Name: "n1", CtldURL: "http://127.0.0.1:1", Key: []byte("0123456789abcdef"),
			StateDir: t.TempDir(), InitPath: "/bin/true"}
	}
	tests := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"bad name", func(c *Config) { c.Name = "a/b" }, "node name"},
		{"no ctld", func(c *Config) { c.CtldURL = "" }, "--ctld is required"},
		{"ctld not a URL", func(c *Config) { c.CtldURL = "127.0.0.1:6817" }, "not an http(s)"},
		{"no key", func(c *Config) { c.Key = nil }, "key"},
		{"negative cpus", func(c *Config) { c.CPUs = -1 }, "--cpus"},
		{"tiny max pids", func(c *Config) { c.MaxPids = 2 }, "--max-pids"},
		{"missing init", func(c *Config) { c.InitPath = "/nonexistent/corral-init" }, "corral-init not found"},
		{"missing shim", func(c *Config) { c.ShimCommand = []string{"/nonexistent/corral-shim"} }, "corral-shim not found"},
		{"shim not executable", func(c *Config) { c.ShimCommand = []string{"/etc/passwd"} }, "corral-shim not found"},
	}
	for _, tc := range tests {
		c := base()
		tc.edit(&c)
		if err := c.Normalize(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
	c := base()
	if err := c.Normalize(); err == nil || !strings.Contains(err.Error(), "corral-shim not found") {
		t.Errorf("without corral-shim beside the test binary: %v, want corral-shim not found", err)
	}
	c = base()
	c.ShimCommand = []string{"/bin/true"}
	if err := c.Normalize(); err != nil || c.CPUs < 1 || c.MemBytes <= 0 || c.KillWait != DefaultKillWait {
		t.Errorf("defaults: %+v, %v", c, err)
	}
}

// TestShimFeaturesWarning: noded says so when its shim cannot filter
// system calls, and stays quiet when it can.
func TestShimFeaturesWarning(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, script, want string
	}{
		{"with seccomp", "echo " + shim.FeatureSeccomp, ""},
		{"without seccomp", "true", "built without -tags seccomp"},
		{"broken", "exit 3", "exit status 3"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+tc.script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		d := &Daemon{cfg: Config{ShimCommand: []string{path}}, log: log.New(&logs, "", 0)}
		d.checkShimFeatures(context.Background())
		if got := logs.String(); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: logged %q, want %q", tc.name, got, tc.want)
		}
	}
}
