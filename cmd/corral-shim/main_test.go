package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/container"
)

// The test binary is corral-shim itself when this variable is set.
const asShim = "CORRAL_SHIM_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asShim) == "1" {
		main()
	}
	os.Exit(m.Run())
}

func runShim(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asShim+"=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	}
	t.Fatal(err)
	return "", 0
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"relative/dir"}, {"/a", "/b"},
		{"step"}, {"step", "/a"}, {"step", "relative", "0"}, {"step", "/a", "x"}, {"step", "/a", "0", "extra"}} {
		out, code := runShim(t, args...)
		if code != 2 || !strings.HasPrefix(out, "usage: corral-shim ") || strings.Count(out, "\n") != 1 {
			t.Errorf("corral-shim %q: exit %d, %q; want exit 2 and one usage line", args, code, out)
		}
	}
}

func TestFeatures(t *testing.T) {
	out, code := runShim(t, "--features")
	want := ""
	if container.SeccompEnabled {
		want = "seccomp\n"
	}
	if code != 0 || out != want {
		t.Errorf("corral-shim --features: exit %d, %q; want 0 and %q", code, out, want)
	}
}
