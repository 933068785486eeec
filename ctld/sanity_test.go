package ctld

import (
	"net/http"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
)

// TestSubmitRefusesWhatTheCLIRefuses: the raw API refuses the scripts
// `corral submit` refuses (api.ValidateScript, one check for both), and
// every string of a job, nested ones and list entries included, is held
// to 64 KiB: a 70 KB environment entry got through a hand-kept field list.
func TestSubmitRefusesWhatTheCLIRefuses(t *testing.T) {
	tc := MustServer(t)
	with := func(f func(*api.JobSpec)) api.JobSpec { s := script("bounded"); f(&s); return s }
	long := strings.Repeat("v", 70<<10)
	tests := []struct {
		name string
		spec api.JobSpec
		want string
	}{
		{"3 MB script", with(func(s *api.JobSpec) { s.Script = "#!/bin/sh\n" + strings.Repeat("#", 3<<20) }),
			"spec.script is 3145738 bytes long; at most 2097152 are allowed"},
		{"NUL in the script", with(func(s *api.JobSpec) { s.Script = "#!/bin/sh\ntrue\x00\n" }), "script contains NUL bytes"},
		{"DOS line breaks", with(func(s *api.JobSpec) { s.Script = "#!/bin/sh\r\ntrue\r\n" }), "script has DOS line breaks"},
		{"70 KB env entry", with(func(s *api.JobSpec) { s.Env = []string{"A=1", "BIG=" + long} }), "spec.env[1] is 71684 bytes long"},
		{"70 KB argument", with(func(s *api.JobSpec) { s.Args = []string{long} }), "spec.args[0] is 71680 bytes long"},
		{"70 KB mount source", with(func(s *api.JobSpec) { s.Mounts = []api.Mount{{Source: "/" + long, Target: "/x"}} }), "spec.mounts[0].source is 71681"},
		{"70 KB export var", with(func(s *api.JobSpec) { s.Export = &api.EnvExport{Mode: "LIST", Vars: []string{long}} }), "spec.export.vars[0] is 71680"},
		{"70 KB gres type", with(func(s *api.JobSpec) { s.Gres = []api.GresRequest{{Name: "gpu", Type: long, Count: 1}} }), "spec.gres[0].type is 71680"},
		{"70 KB exclusive", with(func(s *api.JobSpec) { s.Exclusive = long }), "spec.exclusive is 71680"},
		{"100,000 env entries", with(func(s *api.JobSpec) { s.Env = make([]string, 100000) }), "a list has more than 65536 entries"},
	}
	before, _ := tc.srv.store.LastJobID()
	for _, tt := range tests {
		for _, path := range []string{"/v1/jobs", "/v1/jobs/test"} {
			code, body := callAs(t, tc, nobody, "POST", path, api.SubmitRequest{Spec: tt.spec})
			if code != http.StatusBadRequest || !strings.Contains(errorText(t, body), tt.want) || len(body) > 300 {
				t.Errorf("%s to %s: %d %.300s, want 400 with %q", tt.name, path, code, body, tt.want)
			}
		}
	}
	if after, _ := tc.srv.store.LastJobID(); after != before {
		t.Errorf("refused submits stored jobs: last ID %d -> %d", before, after)
	}
	// jobspec.Validate holds the same bounds for a spec that did not
	// come through a request body.
	if err := jobspec.Validate(&tests[3].spec); err == nil || !strings.Contains(err.Error(), "env[1] is 71684 bytes long") {
		t.Errorf("jobspec.Validate of a 70 KB env entry: %v", err)
	}
}

// TestCheckSizesNamesMapEntries: map keys and values are walked too.
func TestCheckSizesNamesMapEntries(t *testing.T) {
	long := strings.Repeat("k", api.MaxFieldBytes+1)
	for _, tt := range []struct {
		v    any
		want string
	}{
		{map[string]string{"a": long}, "[a] is 65537 bytes long"},
		{map[string]string{long: "v"}, "(a key) is 65537 bytes long"},
		{&struct {
			M map[string][]string `json:"m"`
		}{M: map[string][]string{"x": {"", long}}}, "m[x][1] is 65537 bytes long"},
		{struct{ B []byte }{B: []byte(long)}, "B is 65537 bytes long"},
		{api.JobSpec{Env: make([]string, api.MaxListEntries+1)}, "env has 65537 entries; at most 65536 are allowed"},
	} {
		if err := checkSizes(tt.v); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("checkSizes(%T): %v, want %q", tt.v, err, tt.want)
		}
	}
	if err := checkSizes(&api.SubmitRequest{Spec: script("ok")}); err != nil {
		t.Errorf("a plain job: %v", err)
	}
}

// TestListLengthsBeforeDecoding: lists are counted in the raw body, so a
// body of a million tiny entries is refused before it is decoded into
// 16 bytes or more each; commas and brackets inside strings do not count.
func TestListLengthsBeforeDecoding(t *testing.T) {
	list := func(n int, item string) string {
		return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
	}
	for _, tt := range []struct {
		body string
		ok   bool
	}{
		{`{"env":` + list(api.MaxListEntries, `""`) + `}`, true},
		{`{"env":` + list(api.MaxListEntries+1, `""`) + `}`, false},
		{`{"ids":` + list(api.MaxListEntries+1, `1`) + `}`, false},
		{`{"a":"` + strings.Repeat(",[{", api.MaxListEntries) + `"}`, true},
		{`{"a":"\\",` + `"b":` + list(3, `"\","`) + `}`, true},
		{strings.Repeat("[", maxJSONDepth+1), false},
		{"]]]}},,,", true}, // malformed: the decoder's to refuse
	} {
		err := checkListLengths([]byte(tt.body))
		if (err == nil) != tt.ok {
			t.Errorf("checkListLengths(%.60q...): %v, want ok=%v", tt.body, err, tt.ok)
		}
	}
}
