package jobspec

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// golden is the expectation beside each corpus script (NAME.json next to
// NAME.sh), written by hand: either an error, or the spec (without the
// script text), the warnings and the client flags.
type golden struct {
	Args       []string     `json:"args"`        // options before the script
	ScriptArgs []string     `json:"script_args"` // words after it
	Error      string       `json:"error"`
	Spec       *api.JobSpec `json:"spec"`
	Warnings   []string     `json:"warnings"`
	Parsable   bool         `json:"parsable"`
	Wait       bool         `json:"wait"`
	TestOnly   bool         `json:"test_only"`
	Quiet      bool         `json:"quiet"`
}

// MustGolden reads NAME.json strictly: a misspelt field fails the test
// instead of silently expecting nothing.
func MustGolden(t *testing.T, path string) golden {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: every corpus script needs its golden file: %v", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var g golden
	if err := dec.Decode(&g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if (g.Error == "") == (g.Spec == nil) {
		t.Fatalf("%s: give exactly one of error and spec", path)
	}
	return g
}

func readFile(path string) ([]byte, error) { return os.ReadFile(path) }

func TestCorpus(t *testing.T) {
	scripts, err := filepath.Glob("testdata/scripts/*.sh")
	if err != nil || len(scripts) < 15 {
		t.Fatalf("corpus has %d scripts (%v), want at least 15", len(scripts), err)
	}
	for _, script := range scripts {
		name := strings.TrimSuffix(filepath.Base(script), ".sh")
		t.Run(name, func(t *testing.T) {
			g := MustGolden(t, strings.TrimSuffix(script, ".sh")+".json")
			args := append(append(append([]string{}, g.Args...), script), g.ScriptArgs...)
			r, err := ParseAt(args, readFile, testNow)
			if g.Error != "" {
				if err == nil || err.Error() != g.Error {
					t.Fatalf("error = %v\nwant    %s", err, g.Error)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := r.Spec
			text, _ := os.ReadFile(script)
			if got.Script != string(text) {
				t.Errorf("the spec's script is not the file as read")
			}
			got.Script = ""
			gotJSON, _ := json.Marshal(got)
			wantJSON, _ := json.Marshal(g.Spec)
			if !bytes.Equal(gotJSON, wantJSON) {
				t.Errorf("spec\n got  %s\n want %s", gotJSON, wantJSON)
			}
			if !reflect.DeepEqual(r.Warnings, g.Warnings) {
				t.Errorf("warnings\n got  %q\n want %q", r.Warnings, g.Warnings)
			}
			flags := [4]bool{r.Parsable, r.Wait, r.TestOnly, r.Quiet}
			if want := [4]bool{g.Parsable, g.Wait, g.TestOnly, g.Quiet}; flags != want {
				t.Errorf("parsable, wait, test-only, quiet = %v, want %v", flags, want)
			}
		})
	}
}
