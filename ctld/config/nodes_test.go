package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestNodeFeatures: NodeName lines give nodes their features; mistakes
// name the line and what is wrong.
func TestNodeFeatures(t *testing.T) {
	f, err := ParseFile(strings.NewReader("PartitionName=batch Nodes=ALL\nNodeName=gpu[1-2] Features=gpu,a100\nnodename=cpu1 features=ib\n"), "corral.conf")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"gpu1": {"gpu", "a100"}, "gpu2": {"gpu", "a100"}, "cpu1": {"ib"}}
	if !reflect.DeepEqual(f.Features, want) {
		t.Errorf("features %v, want %v", f.Features, want)
	}
	for _, tc := range []struct{ text, want string }{
		{"NodeName=n1 CPUs=4 Features=a", "corral.conf:2: unknown key CPUs on a NodeName line"},
		{"NodeName=n1", "corral.conf:2: NodeName=n1 has no Features="},
		{"NodeName=n1 Features=a,b&c", `corral.conf:2: Features: "b&c" is not a feature name`},
		{"NodeName=n[1-2] Features=a\nNodeName=n2 Features=b", "corral.conf:3: node n2 already has its features on another line"},
		{"NodeName=n[2-1] Features=a", "corral.conf:2: NodeName: "},
	} {
		_, err := ParseFile(strings.NewReader("PartitionName=batch Nodes=ALL\n"+tc.text+"\n"), "corral.conf")
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q...", tc.text, err, tc.want)
		}
	}
}
