package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/ctld/store/storetest"
)

// The test binary is corral-ctld itself when this variable is set: the
// damage tests need the real process, since a bbolt panic on its own
// goroutine or a fault on the mapping ends it however main is written.
const asCtld = "CORRAL_CTLD_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asCtld) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runCtld runs corral-ctld with args and returns its exit code and the
// stderr lines that are not timestamped log lines.
func runCtld(t *testing.T, args ...string) (int, []string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCtld+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	logLine := regexp.MustCompile(`^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d`)
	var lines []string
	for l := range strings.Lines(stderr.String()) {
		if !logLine.MatchString(l) {
			lines = append(lines, strings.TrimSuffix(l, "\n"))
		}
	}
	return code, lines
}

// refusedOnce: exit 1 and one error line containing want.
func refusedOnce(t *testing.T, what string, code int, lines []string, want string) {
	t.Helper()
	if code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], "corral-ctld: ") || !strings.Contains(lines[0], want) {
		t.Errorf("%s: exit %d, stderr %q; want exit 1 and one line with %q", what, code, lines, want)
	}
}

func startArgs(state string) []string {
	return []string{"--state", state, "--socket", filepath.Join(state, "s.sock"), "--listen", "127.0.0.1:0"}
}

// Issue 11, finding 6: a damaged ctld.db made --check and a start panic
// (zeroed first page), fault (truncated) or start empty (0 bytes).
func TestDamagedStateFileRefusedByCheckAndStart(t *testing.T) {
	for _, dmg := range storetest.Damages {
		t.Run(dmg.Name, func(t *testing.T) {
			state := mustStateDir(t, 300)
			db := filepath.Join(state, store.FileName)
			dmg.Do(t, db)
			before := storetest.Digest(t, db)
			code, lines := runCtld(t, "--check", "--state", state)
			refusedOnce(t, "--check", code, lines, db)
			code, lines = runCtld(t, startArgs(state)...)
			refusedOnce(t, "start", code, lines, db)
			if storetest.Digest(t, db) != before {
				t.Error("the refused state file was changed")
			}
		})
	}
}

func TestStateDirThatHadJobsNeverStartsEmpty(t *testing.T) {
	state := mustStateDir(t, 3)
	db := filepath.Join(state, store.FileName)
	if err := os.Remove(db); err != nil {
		t.Fatal(err)
	}
	code, lines := runCtld(t, startArgs(state)...)
	refusedOnce(t, "start without ctld.db", code, lines, "corral admin backup")
	code, lines = runCtld(t, "--check", "--state", state)
	refusedOnce(t, "--check without ctld.db", code, lines, "job IDs up to at least 3 were handed out")
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refusal created %s: %v", db, err)
	}
}
