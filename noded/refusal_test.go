package noded

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/noded/nodedtest"
)

// Every launch refusal says whose fault it is (issue 11, finding 4):
// what the job asked for is api.KindJobRefused, so ctld fails the job and
// keeps the node up; the node's own trouble carries no kind, so ctld holds
// the node down and retries the job elsewhere.
func TestLaunchRefusalKinds(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n := mustNode(t, ctld, "")
	busy := n.launchReq("sleep 100\n")
	busy.CPUs = 2
	n.launch(t, busy)
	for _, tc := range []struct {
		name     string
		edit     func(*api.LaunchRequest)
		jobFault bool
	}{
		{"relative work dir", func(r *api.LaunchRequest) { r.WorkDir = "work" }, true},
		{"no memory", func(r *api.LaunchRequest) { r.MemBytes = 0 }, true},
		{"empty script", func(r *api.LaunchRequest) { r.Script = "" }, true},
		{"NUL in the output path", func(r *api.LaunchRequest) { r.Output = "a\x00b" }, true},
		{"a launch over the body limit", func(r *api.LaunchRequest) { r.Script = strings.Repeat("x", api.MaxLaunchBytes) }, true},
		{"more CPUs than the node registered", func(r *api.LaunchRequest) { r.CPUs = 3 }, false},
		{"no free CPUs", func(r *api.LaunchRequest) {}, false},
	} {
		req := n.launchReq("echo x\n")
		tc.edit(&req)
		err := n.client.Do(context.Background(), http.MethodPost, "/v1/launch", req, nil)
		var se *api.StatusError
		if !errors.As(err, &se) || se.Code/100 != 4 || api.JobRefused(err) != tc.jobFault {
			t.Errorf("%s: %v, want a 4xx refusal with job fault %v", tc.name, err, tc.jobFault)
		}
	}
	if err := n.client.Do(context.Background(), http.MethodPost, "/v1/signal", api.SignalRequest{JobID: busy.JobID}, nil); err != nil {
		t.Fatal(err)
	}
	ctld.Ended(busy.JobID)

	// With free cores the --mount refusal of a node without --mount-root
	// is reached: the job's fault.
	req := n.launchReq("echo x\n")
	req.Mounts = []api.Mount{{Source: "/usr", Target: "/mnt", ReadOnly: true}}
	err := n.client.Do(context.Background(), http.MethodPost, "/v1/launch", req, nil)
	if !api.JobRefused(err) || !strings.Contains(err.Error(), "allows no --mount") {
		t.Errorf("--mount on a node without --mount-root: %v, want a job-fault refusal", err)
	}
	mustNoJobDirs(t, n)
}

// A node reports its --mount-root directories when it registers, so ctld
// can refuse at submit a --mount no node allows.
func TestRegistrationReportsMountRoots(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	mustNode(t, ctld, "", func(c *Config) { c.MountRoots = []string{"/srv/data/", "/scratch"} })
	ctld.WaitFor("a registration", func(f *nodedtest.FakeCtld) bool { return len(f.Registers) > 0 })
	ctld.WaitFor("its mount roots", func(f *nodedtest.FakeCtld) bool {
		return slices.Equal(f.Registers[0].MountRoots, []string{"/srv/data", "/scratch"})
	})
}
