package api

import (
	"strings"
	"testing"
	"time"
)

type sizedInner struct {
	Name string `json:"name"`
}

type sizedOuter struct {
	sizedInner           // embedded: its fields read as the outer's
	When       time.Time `json:"when"` // no exported field: never walked
	Count      int       `json:"count"`
	Skip       string    `json:"-"`
	hidden     string    //nolint:unused // unexported: not in JSON
	Tags       []string  `json:"tags"`
	Nums       []int     `json:"nums"`
	Env        map[string]string
	Next       *sizedOuter `json:"next,omitempty"`
	Any        any         `json:"any,omitempty"`
}

// TestCheckSizes: every string, list and map is bounded wherever it
// sits, and the error names it by its JSON path; what JSON never carries
// is not walked.
func TestCheckSizes(t *testing.T) {
	long := strings.Repeat("x", MaxFieldBytes+1)
	for _, tc := range []struct {
		name string
		v    any
		want string // "" = accepted
	}{
		{"empty", &sizedOuter{}, ""},
		{"at the bound", &sizedOuter{Tags: []string{strings.Repeat("x", MaxFieldBytes)}}, ""},
		{"embedded field", &sizedOuter{sizedInner: sizedInner{Name: long}}, "name is 65537 bytes long"},
		{"list entry", &sizedOuter{Tags: []string{"a", long}}, "tags[1] is 65537 bytes long"},
		{"long list of numbers", &sizedOuter{Nums: make([]int, MaxListEntries+1)}, "nums has 65537 entries"},
		{"map value", &sizedOuter{Env: map[string]string{"K": long}}, "Env[K] is 65537 bytes long"},
		{"map key", &sizedOuter{Env: map[string]string{long: "v"}}, "Env (a key) is 65537 bytes long"},
		{"nested pointer", &sizedOuter{Next: &sizedOuter{Next: &sizedOuter{Tags: []string{long}}}}, "next.next.tags[0] is"},
		{"interface", &sizedOuter{Any: map[string]any{"k": []any{long}}}, "any[k][0] is"},
		{"json:\"-\" is not walked", &sizedOuter{Skip: long}, ""},
		{"unexported is not walked", &sizedOuter{hidden: long}, ""},
		{"script has its own bound", &JobSpec{Script: strings.Repeat("x", MaxScriptBytes)}, ""},
		{"script over its bound", &JobSpec{Script: strings.Repeat("x", MaxScriptBytes+1)}, "script is 2097153 bytes long"},
		{"a spec's other strings keep the field bound", &SubmitRequest{Spec: JobSpec{Name: long}}, "spec.name is"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckSizes(tc.v)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("accepted, want %q", tc.want)
			case tc.want != "" && !strings.HasPrefix(err.Error(), tc.want):
				t.Fatalf("got %q, want it to start with %q", err, tc.want)
			}
		})
	}
}

// BenchmarkCheckSizesSubmit is the walk every submit's body takes.
func BenchmarkCheckSizesSubmit(b *testing.B) {
	req := &SubmitRequest{Spec: JobSpec{Name: "bench", Script: "#!/bin/sh\ntrue\n",
		Env: []string{"PATH=/usr/bin:/bin", "HOME=/root", "LANG=C.UTF-8"}}}
	for b.Loop() {
		if err := CheckSizes(req); err != nil {
			b.Fatal(err)
		}
	}
}
