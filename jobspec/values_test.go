package jobspec

import (
	"reflect"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

func TestParseExport(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want *api.EnvExport
	}{
		{"ALL", nil},
		{"all", nil},
		{"ALL,ALL", nil},
		{"NONE", &api.EnvExport{Mode: api.ExportNone}},
		{"nil", &api.EnvExport{Mode: api.ExportNil}},
		{"EDITOR", &api.EnvExport{Mode: api.ExportList, Vars: []string{"EDITOR"}}},
		{"EDITOR,ARG1=test", &api.EnvExport{Mode: api.ExportList, Vars: []string{"EDITOR", "ARG1=test"}}},
		{"ALL,EDITOR=/bin/emacs", &api.EnvExport{Mode: api.ExportAll, Vars: []string{"EDITOR=/bin/emacs"}}},
		{"A=,B==c", &api.EnvExport{Mode: api.ExportList, Vars: []string{"A=", "B==c"}}},
		{`A="x,y",B`, &api.EnvExport{Mode: api.ExportList, Vars: []string{`A="x,y"`, "B"}}},
		{`'C=1,2',_D9`, &api.EnvExport{Mode: api.ExportList, Vars: []string{"C=1,2", "_D9"}}},
	} {
		got, err := ParseExport(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseExport(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"", "use ALL, NONE, NIL or a list like NAME,NAME=value"},
		{"NONE,A=1", "NONE cannot be combined with variables"},
		{"A,nil", "NIL cannot be combined with variables"},
		{"A,,B", "empty entry in the list"},
		{"1A=x", `"1A" is not a variable name (in "1A=x")`},
		{"=x", `"" is not a variable name (in "=x")`},
		{"A-B", `"A-B" is not a variable name (in "A-B")`},
		{`A="x`, "unterminated \" quote"},
	} {
		_, err := ParseExport(tc.in)
		want := "invalid --export " + quoteValue(tc.in) + ": " + tc.want
		if err == nil || err.Error() != want {
			t.Errorf("ParseExport(%q) error = %v\nwant %s", tc.in, err, want)
		}
	}
}

func TestParseSignal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want api.JobSignal
		resv bool
	}{
		{"USR1", api.JobSignal{Signal: 10, Before: 60}, false},
		{"SIGUSR2@120", api.JobSignal{Signal: 12, Before: 120}, false},
		{"sigterm@0", api.JobSignal{Signal: 15, Before: 0}, false},
		{"10@300", api.JobSignal{Signal: 10, Before: 300}, false},
		{"B:USR1@90", api.JobSignal{Signal: 10, Before: 90, BatchOnly: true}, false},
		{"b:INT", api.JobSignal{Signal: 2, Before: 60, BatchOnly: true}, false},
		{"R:TERM@65535", api.JobSignal{Signal: 15, Before: 65535}, true},
		{"RB:XCPU", api.JobSignal{Signal: 24, Before: 60, BatchOnly: true}, true},
		{"64", api.JobSignal{Signal: 64, Before: 60}, false},
	} {
		got, resv, err := ParseSignal(tc.in)
		if err != nil || got != tc.want || resv != tc.resv {
			t.Errorf("ParseSignal(%q) = %+v, %v, %v; want %+v, %v", tc.in, got, resv, err, tc.want, tc.resv)
		}
	}
	const hint = "use [B:]SIGNAL[@SECONDS], SIGNAL a number from 1 to 64 or a name like USR1 or SIGTERM"
	for _, tc := range []struct{ in, want string }{
		{"", `unknown signal "": ` + hint},
		{"USR3", `unknown signal "USR3": ` + hint},
		{"0", "signal 0 does not exist: " + hint},
		{"65", "signal 65 does not exist: " + hint},
		{"USR1@", "the time after @ must be 0 to 65535 seconds: " + hint},
		{"USR1@65536", "the time after @ must be 0 to 65535 seconds: " + hint},
		{"USR1@-1", "the time after @ must be 0 to 65535 seconds: " + hint},
		{"X:USR1", `unknown flag 'X' before ':': ` + hint},
	} {
		_, _, err := ParseSignal(tc.in)
		want := "invalid --signal " + quoteValue(tc.in) + ": " + tc.want
		if err == nil || err.Error() != want {
			t.Errorf("ParseSignal(%q) error = %v\nwant %s", tc.in, err, want)
		}
	}
}

func gres(name, typ string, n int64) api.GresRequest {
	return api.GresRequest{Name: name, Type: typ, Count: n}
}

func TestParseGres(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []api.GresRequest
	}{
		{"gpu", []api.GresRequest{gres("gpu", "", 1)}},
		{"gpu:2", []api.GresRequest{gres("gpu", "", 2)}},
		{"gpu:a100:2", []api.GresRequest{gres("gpu", "a100", 2)}},
		{"gpu:kepler", []api.GresRequest{gres("gpu", "kepler", 1)}},
		{"gres/gpu:4,nvme:1k", []api.GresRequest{gres("gpu", "", 4), gres("nvme", "", 1024)}},
		{"gpu:a100:2,gpu:v100:1", []api.GresRequest{gres("gpu", "a100", 2), gres("gpu", "v100", 1)}},
		{"gpu:0", nil},
		{"none", nil},
		{"NONE", nil},
		{"bandwidth:2G", []api.GresRequest{gres("bandwidth", "", 2<<30)}},
	} {
		got, err := parseGres(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseGres(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"", "use name[:type][:count], as in gpu:2 or gpu:a100:2"},
		{"help", "use name[:type][:count], as in gpu:2 or gpu:a100:2"},
		{"gpu:a:b:2", `"gpu:a:b:2" has too many fields: use name[:type][:count]`},
		{"gpu,,x", `"" is not name[:type][:count] (names are letters, digits, _ . and -)`},
		{"gpu:a 100", `"gpu:a 100" is not name[:type][:count] (names are letters, digits, _ . and -)`},
		{"gpu:2,gpu:3", "gpu is listed twice"},
		{"gpu:2m", `"gpu:2m" asks for more than 1048576 GPUs`},
	} {
		_, err := parseGres(tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("parseGres(%q) error = %v\nwant %s", tc.in, err, tc.want)
		}
	}
}

func TestParseGPUs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []api.GresRequest
	}{
		{"4", []api.GresRequest{gres("gpu", "", 4)}},
		{"a100:4", []api.GresRequest{gres("gpu", "a100", 4)}},
		{"volta:3,kepler:1", []api.GresRequest{gres("gpu", "volta", 3), gres("gpu", "kepler", 1)}},
		{"0", nil},
	} {
		got, err := parseGPUs(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseGPUs(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "x", "a100:", ":2", "a100:x", "-1", "2m", "a 1:2"} {
		if _, err := parseGPUs(in); err == nil {
			t.Errorf("parseGPUs(%q) accepted", in)
		}
	}
}

func TestParseNodes(t *testing.T) {
	for _, tc := range []struct {
		in     string
		lo, hi int
	}{
		{"1", 1, 1}, {"16", 16, 16}, {"2-4", 2, 4}, {"1k", 1024, 1024}, {"1K-2k", 1024, 2048},
		{"1,5,9", 1, 9}, {"9,5", 5, 9}, {"1-15:4", 1, 13}, {"2m", 2 << 20, 2 << 20},
	} {
		lo, hi, err := parseNodes(tc.in)
		if err != nil || lo != tc.lo || hi != tc.hi {
			t.Errorf("parseNodes(%q) = %d, %d, %v; want %d, %d", tc.in, lo, hi, err, tc.lo, tc.hi)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"0", "--nodes must be at least 1 (got 0)"},
		{"0-2", "--nodes must be at least 1 (got 0)"},
		{"", `invalid --nodes "": ` + nodesHint},
		{"4-2", `invalid --nodes "4-2": ` + nodesHint},
		{"x", `invalid --nodes "x": ` + nodesHint},
		{"1:2", `invalid --nodes "1:2": ` + nodesHint},
		{"1-5:0", `invalid --nodes "1-5:0": ` + nodesHint},
		{"3g", `invalid --nodes "3g": ` + nodesHint},
		{"9999999k", `invalid --nodes "9999999k": ` + nodesHint},
	} {
		_, _, err := parseNodes(tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("parseNodes(%q) error = %v\nwant %s", tc.in, err, tc.want)
		}
	}
}

func TestParseMount(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want api.Mount
	}{
		{"/data:/data", api.Mount{Source: "/data", Target: "/data"}},
		{"/scratch/me:/work:ro", api.Mount{Source: "/scratch/me", Target: "/work", ReadOnly: true}},
		{"/a/:/b/:RW", api.Mount{Source: "/a", Target: "/b"}},
	} {
		got, err := parseMount(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parseMount(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"/data", "use SRC:DST or SRC:DST:ro with absolute paths"},
		{"/a:/b:ro:x", "use SRC:DST or SRC:DST:ro with absolute paths"},
		{"data:/data", `"data" is not an absolute path`},
		{"/data:", `"" is not an absolute path`},
		{"/data:/x:rx", `unknown mode "rx": use ro or rw`},
		{"/a/../etc:/x", `"/a/../etc" is not a clean path (no //, . or ..)`},
		{"/a//b:/x", `"/a//b" is not a clean path (no //, . or ..)`},
		{"/a:/", "cannot mount over the container's root"},
		{"/a\n:/b", "control characters are not allowed"},
	} {
		_, err := parseMount(tc.in)
		want := "invalid --mount " + quoteValue(tc.in) + ": " + tc.want
		if err == nil || err.Error() != want {
			t.Errorf("parseMount(%q) error = %v\nwant %s", tc.in, err, want)
		}
	}
}

func TestValidImage(t *testing.T) {
	for _, ok := range []string{"ubuntu", "ubuntu:24.04", "nvcr.io/nvidia/pytorch:24.05-py3", "localhost:5000/team/app:1.2",
		"alpine@sha256:0123abcd", "nvcr.io#nvidia/pytorch:21.12-py3"} {
		if !validImage(ok) {
			t.Errorf("validImage(%q) = false", ok)
		}
	}
	for _, bad := range []string{"", "-rm", ":tag", "@sha", "ubuntu latest", "a;b", "ubuntu\n", strings.Repeat("a", 513)} {
		if validImage(bad) {
			t.Errorf("validImage(%q) = true", bad)
		}
	}
}
