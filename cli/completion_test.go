package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// MustCompletionScript prints the script for shell and writes it to a file.
func MustCompletionScript(t *testing.T, shell string) string {
	t.Helper()
	r := runCLI("", "completion", shell)
	if r.code != 0 || r.stderr != "" || r.stdout == "" {
		t.Fatalf("completion %s: %+v", shell, r)
	}
	path := filepath.Join(t.TempDir(), "corral."+shell)
	if err := os.WriteFile(path, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The bash script completes commands, options and values, run by bash as
// it would be while completing.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("needs bash: not installed")
	}
	script := MustCompletionScript(t, "bash")
	cases := []struct{ words, want string }{
		{"corral ''", "submit queue show cancel hold release requeue update acct prio share sim nodes image log usage policy dev srun salloc admin dashboard completion"},
		{"corral su", "submit"},
		{"corral --socket /x qu", "queue"},
		{"corral submit --mail", "--mail-type --mail-user"},
		{"corral submit --open-mode ''", "append truncate"},
		{"corral submit --open-mode = ap", "append"},
		{"corral submit --exclusive = ''", "user"},
		{"corral submit -p gpu --export=N", ""}, // "--export=N" is one word only without COMP_WORDBREAKS
		{"corral submit --export = N", "NONE NIL"},
		{"corral submit --kill-on-invalid-dep ''", "yes no"},
		{"corral submit -p gpu job.sh --", ""}, // the script's own arguments
		{"corral show ''", "job"},
		{"corral show job --j", "--json"},
		{"corral queue --st", "--state --states --start"},
		{"corral completion ''", "bash zsh"},
		{"corral completion bash ''", ""},
	}
	var harness strings.Builder
	harness.WriteString("source " + script + "\n")
	for _, c := range cases {
		harness.WriteString("COMP_WORDS=(" + c.words + "); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); COMPREPLY=(); _corral 2>/dev/null; echo \"${COMPREPLY[*]}\"\n")
	}
	cmd := exec.Command(bash, "--norc", "-c", harness.String())
	cmd.Dir = t.TempDir() // no files to complete
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("bash printed %d lines for %d cases:\n%s", len(lines), len(cases), out)
	}
	for i, c := range cases {
		if lines[i] != c.want {
			t.Errorf("completing %s: got %q, want %q", c.words, lines[i], c.want)
		}
	}
}

func TestZshCompletion(t *testing.T) {
	script := MustCompletionScript(t, "zsh")
	text, _ := os.ReadFile(script)
	for _, want := range []string{
		"#compdef corral",
		"'submit:submit a batch script",
		"'(-c --cpus-per-task)'{-c+,--cpus-per-task=}'[CPUs per task (default 1)]:N:'",
		"'(--open-mode)--open-mode=[open the output files for appending or truncate them]:append|truncate:(append truncate)'",
		"'(--exclusive)--exclusive=-[whole nodes with all their CPUs and GPUs, shared with no other job; =user shares with your own jobs]::user:(user)'",
		"'*--mount=[",
		"'(-o --output)'{-o+,--output=}'[stdout file",
		"'(--mail-type)--mail-type=[ignored\\: this cluster sends no mail]:TYPE:'",
		"'1:completion:(bash zsh)'",
		"compdef _corral corral",
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("zsh script lacks %s", want)
		}
	}
	if strings.Contains(string(text), "--autocomplete") {
		t.Error("zsh script offers a hidden option")
	}
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Skip("needs zsh to check the script's syntax: not installed")
	}
	if out, err := exec.Command(zsh, "-n", script).CombinedOutput(); err != nil {
		t.Errorf("zsh -n: %v\n%s", err, out)
	}
}

func TestCompletionUsage(t *testing.T) {
	mustFail(t, runCLI("", "completion"), 2, "corral completion: give one shell: bash or zsh (got 0 arguments)")
	mustFail(t, runCLI("", "completion", "fish"), 2, `corral completion: unknown shell "fish": use bash or zsh`)
}
