//go:build !urfave_cli_no_docs

package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/jobspec"
)

// The committed man pages and option table are what the commands
// generate now.
func TestGeneratedDocsAreCurrent(t *testing.T) {
	const fix = "; run go generate ./cli"
	pages, err := manPages()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range pages {
		got, err := os.ReadFile(filepath.Join("..", "docs", "man", name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("docs/man/%s is out of date (%v)%s", name, err, fix)
		}
	}
	md, err := os.ReadFile(filepath.Join("..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := replaceOptionsTable(md)
	if err != nil || !bytes.Equal(md, want) {
		t.Errorf("docs/cli.md's option table is out of date (%v)%s", err, fix)
	}
}

func TestOptionsTableListsEveryOption(t *testing.T) {
	table := optionsTable()
	for _, o := range jobspec.Options() {
		row := ""
		for _, line := range strings.Split(table, "\n") {
			if strings.Contains(line, "`--"+o.Long+"`") {
				row = line
			}
		}
		wantStatus := "| supported |"
		switch {
		case o.Ignored != "":
			wantStatus = "| ignored, with a warning |"
		case o.Corral:
			wantStatus = "| corral only |"
		}
		if !strings.Contains(row, wantStatus) {
			t.Errorf("--%s: row %q lacks %q", o.Long, row, wantStatus)
		}
		if o.EnvVar != "" && !strings.Contains(row, "`"+o.EnvVar+"`") {
			t.Errorf("--%s: row %q does not name its variable %s", o.Long, row, o.EnvVar)
		}
	}
	if _, err := replaceOptionsTable([]byte("# no markers\n")); err == nil {
		t.Error("a file without markers was accepted")
	}
}

func TestDocsCommand(t *testing.T) {
	dir := t.TempDir()
	if r := runCLI("", "docs", "man", dir); r.code != 0 {
		t.Fatalf("docs man: %+v", r)
	}
	page, err := os.ReadFile(filepath.Join(dir, "corral-submit.1"))
	if err != nil || !bytes.Contains(page, []byte(`\fB--mail-type\fP`)) || !bytes.Contains(page, []byte("this cluster sends no mail")) {
		t.Errorf("corral-submit.1 (%v):\n%.300s", err, page)
	}
	md := filepath.Join(dir, "cli.md")
	os.WriteFile(md, []byte("intro\n"+optionsBegin+"\nstale\n"+optionsEnd+"\nend\n"), 0o644)
	if r := runCLI("", "docs", "options", md); r.code != 0 {
		t.Fatalf("docs options: %+v", r)
	}
	got, _ := os.ReadFile(md)
	if !bytes.HasPrefix(got, []byte("intro\n")) || bytes.Contains(got, []byte("stale")) || !bytes.HasSuffix(got, []byte(optionsEnd+"\nend\n")) ||
		!bytes.Contains(got, []byte("| `-c`, `--cpus-per-task` | supported |")) {
		t.Errorf("docs options wrote:\n%s", got)
	}
	if r := runCLI("", "--help"); strings.Contains(r.stdout, "docs") {
		t.Error("the docs command shows in corral --help")
	}
}

func TestMarkdownEscape(t *testing.T) {
	if got := mdEscape("a*b_[c]|%j-x"); got != `a\*b\_\[c\]\|%j\-x` {
		t.Errorf("mdEscape = %s", got)
	}
}
