package jobspec

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestNodeNames: -w and -x take a host list, or the names in a file when
// the value has a slash; --nodefile always reads a file.
func TestNodeNames(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "hosts")
	if err := os.WriteFile(file, []byte("dev2,dev3\n\ngpu01 \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Parse([]string{"-w", file, "-x", "dev[7-8]", "--wrap", "true"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"dev2", "dev3", "gpu01"}; !reflect.DeepEqual(r.Spec.NodeList, want) {
		t.Errorf("-w FILE: %q, want %q", r.Spec.NodeList, want)
	}
	if want := []string{"dev7", "dev8"}; !reflect.DeepEqual(r.Spec.Exclude, want) {
		t.Errorf("-x dev[7-8]: %q, want %q", r.Spec.Exclude, want)
	}
	t.Chdir(dir)
	if r, err = Parse([]string{"--nodefile", "hosts", "--wrap", "true"}, nil); err != nil || len(r.Spec.NodeList) != 3 {
		t.Errorf("--nodefile hosts: %v, %v", r, err)
	}
	for _, tc := range []struct{ args, want string }{
		{"-w dev[3-1]", "--nodelist: "},
		{"-x " + filepath.Join(dir, "missing"), "--exclude: open "},
		{"-w ./empty", "--nodelist: no node names in"},
	} {
		if err := os.WriteFile(filepath.Join(dir, "empty"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Parse(append(strings.Fields(tc.args), "--wrap", "true"), nil)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q...", tc.args, err, tc.want)
		}
	}
}
