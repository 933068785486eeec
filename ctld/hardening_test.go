package ctld

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/authz"
)

// bodyRoutes are the user-plane routes that read a JSON body.
var bodyRoutes = []string{"/v1/jobs", "/v1/jobs/test", "/v1/jobs/cancel", "/v1/jobs/hold", "/v1/jobs/release",
	"/v1/jobs/requeue", "/v1/jobs/update", "/v1/images", "/v1/policies"}

// TestAbsurdValues: values no real job asks for get 400 and one line
// naming the problem, and nothing is stored.
func TestAbsurdValues(t *testing.T) {
	tc := MustServer(t, withPartitions("PartitionName=batch Nodes=ALL MaxTime=1:00:00 Default=YES\nPartitionName=open Nodes=ALL\n"),
		func(c *Config) { c.Pipeline.MaxArrayTasks = 100 })
	with := func(f func(*api.JobSpec)) api.JobSpec { s := script("absurd"); f(&s); return s }
	future := time.Now().Add(20 * 366 * 24 * time.Hour)
	tests := []struct {
		name string
		spec api.JobSpec
		want string
	}{
		{"a billion CPUs", with(func(s *api.JobSpec) { s.CPUs = 1e9 }), "cpus=1000000000 is out of range"},
		{"negative memory", with(func(s *api.JobSpec) { s.MemBytes = -1 }), "memory must not be negative"},
		{"an exabyte", with(func(s *api.JobSpec) { s.MemBytes = 1 << 60 }), "mem_bytes=1152921504606846976 is out of range"},
		{"past MaxTime", with(func(s *api.JobSpec) { s.TimeLimit = 7200 }), "over partition batch's MaxTime"},
		{"past the absolute max", with(func(s *api.JobSpec) { s.Partition, s.TimeLimit = "open", 1e12 }), "time_limit_s=1000000000000 is out of range"},
		{"a million nodes", with(func(s *api.JobSpec) { s.Nodes = 1 << 20 }), "nodes=1048576 is out of range"},
		{"negative gres", with(func(s *api.JobSpec) { s.Gres = []api.GresRequest{{Name: "gpu", Count: -3}} }), "gres gpu count -3 is out of range"},
		{"begin in 20 years", with(func(s *api.JobSpec) { s.Begin = &future }), "more than ten years ahead"},
		{"array past MaxArrayTasks", with(func(s *api.JobSpec) {
			s.Array = &api.JobArray{Ranges: []api.ArrayRange{{First: 0, Last: 1000, Step: 1}}}
		}), "100"},
		{"huge name", with(func(s *api.JobSpec) { s.Name = strings.Repeat("n", 100<<10) }), "name is 102400 bytes long"},
		{"umask with the sticky bit", with(func(s *api.JobSpec) { s.Umask = "1777" }), `umask "1777" is not an octal mode`},
		{"umask not octal", with(func(s *api.JobSpec) { s.Umask = "0099" }), `umask "0099" is not an octal mode`},
	}
	before, _ := tc.srv.store.LastJobID()
	for _, tt := range tests {
		code, body := callAs(t, tc, nobody, "POST", "/v1/jobs", api.SubmitRequest{Spec: tt.spec})
		if code != http.StatusBadRequest || !strings.Contains(errorText(t, body), tt.want) || strings.Contains(string(body), "\\n") {
			t.Errorf("%s: %d %s, want 400 with %q on one line", tt.name, code, body, tt.want)
		}
	}
	// More nodes than exist, once nodes are known.
	newFakeNode(tc, "n1", 4, 8<<30).register()
	if code, body := callAs(t, tc, nobody, "POST", "/v1/jobs", api.SubmitRequest{Spec: with(func(s *api.JobSpec) { s.Nodes = 3 })}); code != 400 ||
		!strings.Contains(string(body), "asks for 3 nodes") {
		t.Errorf("3 nodes of 1: %d %s", code, body)
	}
	if after, _ := tc.srv.store.LastJobID(); after != before {
		t.Errorf("refused submits stored jobs: last ID %d -> %d", before, after)
	}
}

// TestOversizedAndUnknown: every body route answers 413 to a body over
// its limit (authz.Bounds) and 400 to an unknown field.
func TestOversizedAndUnknown(t *testing.T) {
	tc := MustServer(t)
	huge := `{"spec":{"script":"` + strings.Repeat("x", maxUserBody+10) + `"}}`
	for _, path := range bodyRoutes {
		code, body := callAs(t, tc, 0, "POST", path, huge)
		limit := fmt.Sprintf("larger than %d MiB", authz.Bounds["POST "+path].Body>>20)
		if code != http.StatusRequestEntityTooLarge || !strings.Contains(errorText(t, body), limit) {
			t.Errorf("POST %s with %d bytes: %d %s", path, len(huge), code, body)
		}
		code, body = callAs(t, tc, 0, "POST", path, `{"bogus_field":1}`)
		if code != http.StatusBadRequest || !strings.Contains(errorText(t, body), `unknown field "bogus_field"`) {
			t.Errorf("POST %s with an unknown field: %d %s", path, code, body)
		}
		code, body = callAs(t, tc, 0, "POST", path, `{} {}`)
		if code != http.StatusBadRequest {
			t.Errorf("POST %s with two objects: %d %s", path, code, body)
		}
	}
}

// FuzzDecodeSubmit feeds arbitrary bodies to POST /v1/jobs: no panic,
// only 2xx or 4xx, a 4xx stores nothing and a 2xx leaves a whole job.
func FuzzDecodeSubmit(f *testing.F) {
	for _, seed := range []string{
		`{"spec":{"script":"#!/bin/sh\ntrue\n","cpus":1,"mem_bytes":1048576,"work_dir":"/tmp"}}`,
		`{"spec":{"script":"#!/bin/sh\n","cpus":1,"work_dir":"/tmp","array":{"ranges":[{"first":0,"last":3,"step":1}]}}}`,
		`{"spec":{"script":"x","cpus":1000000000,"work_dir":"/tmp"}}`,
		`{"spec":{"script":"x","cpus":1,"mem_bytes":-5,"work_dir":"/tmp"}}`,
		`{"spec":{"script":"x","cpus":1,"work_dir":"/tmp","time_limit_s":99999999999}}`,
		`{"spec":{"script":"x","cpus":1,"work_dir":"/tmp","gres":[{"name":"gpu","count":9223372036854775807}]}}`,
		`{"spec":{"script":"x","cpus":1,"work_dir":"/tmp","dependency":{"kind":"afterok"}}}`,
		`{"spec":{}, "on_behalf_of": 0}`, `{"spec":null}`, `[]`, `null`, `{`, ``, `{"spec":{"cpus":"1"}}`,
	} {
		f.Add(seed)
	}
	tc := MustServer(f, withRate(-1, 0))
	f.Fuzz(func(t *testing.T, body string) {
		before, err := tc.srv.store.LastJobID()
		if err != nil {
			t.Fatal(err)
		}
		code, out := callAs(t, tc, nobody, "POST", "/v1/jobs", body)
		after, _ := tc.srv.store.LastJobID()
		switch code / 100 {
		case 2:
			var resp api.SubmitResponse
			if err := json.Unmarshal(out, &resp); err != nil || resp.JobID == 0 {
				t.Fatalf("2xx without a job ID: %s", out)
			}
			tc.srv.mu.RLock()
			_, msg := tc.srv.q.view(jobRef{id: resp.JobID})
			tc.srv.mu.RUnlock()
			if msg != "" || after < resp.JobID {
				t.Fatalf("accepted job %d is not whole: %q (last stored ID %d)", resp.JobID, msg, after)
			}
		case 4:
			if after != before {
				t.Fatalf("a refused submit (%d %s) stored something: last ID %d -> %d", code, out, before, after)
			}
			var e api.Error
			if json.Unmarshal(out, &e) != nil || e.Error == "" || strings.Contains(e.Error, "\n") {
				t.Fatalf("refusal is not one clear error line: %s", out)
			}
		default:
			t.Fatalf("status %d for body %q: %s", code, body, out)
		}
	})
}

// FuzzUserPlaneBodies sends arbitrary bodies to every body route: no
// panic and never a 5xx (a controller fault) for the caller's input.
func FuzzUserPlaneBodies(f *testing.F) {
	for i := range bodyRoutes {
		for _, seed := range []string{`{}`, `{"ids":[1,2]}`, `{"id":1,"name":"x"}`, `{"op":"pull","ref":"alpine"}`,
			`{"kind":"user","name":"x","limits":{}}`, `{"user":"root","states":["RUNNING"]}`, `{"ids":[18446744073709551615]}`} {
			f.Add(uint8(i), seed)
		}
	}
	tc := MustServer(f, withRate(-1, 0))
	tc.submit(script("target"))
	f.Fuzz(func(t *testing.T, route uint8, body string) {
		path := bodyRoutes[int(route)%len(bodyRoutes)]
		code, out := callAs(t, tc, nobody, "POST", path, body)
		if code/100 != 2 && code/100 != 4 {
			t.Fatalf("POST %s %q: %d %s", path, body, code, out)
		}
	})
}
