package ctld

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

func mustPolicy(t *testing.T, tc *testCluster, p api.Policy) {
	t.Helper()
	if err := tc.client.SetPolicy(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

func mustUsage(t *testing.T, tc *testCluster) *api.Usage {
	t.Helper()
	u, err := tc.client.UsageFor(context.Background(), "", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Partitions) != 1 || len(u.Users) != 1 {
		t.Fatalf("usage %+v", u)
	}
	return u
}

// TestPolicyHoldsSecondJob is acceptance item 4: with a policy of 1 CPU,
// the user's second 1-CPU job stays PENDING with the policy's reason
// although CPUs are free, and starts when the first ends.
func TestPolicyHoldsSecondJob(t *testing.T) {
	tc := MustServer(t)
	node := newFakeNode(tc, "n1", 4, 4<<30)
	node.register()
	mustPolicy(t, tc, api.Policy{Kind: api.PolicyUser, Name: "root", Limits: api.Limits{MaxCPUs: 1}})
	first, second := tc.submit(script("first")), tc.submit(script("second"))
	if l := node.waitLaunch(); l.JobID != first {
		t.Fatalf("launched %d first", l.JobID)
	}
	j := tc.waitJob(second, "the policy reason", func(j api.Job) bool { return j.Reason == api.ReasonPolicyMaxCPUs })
	if j.State != api.StatePending || tc.node("n1").AllocCPUs != 1 {
		t.Fatalf("second job %s %s with %d CPUs allocated of 4", j.State, j.Reason, tc.node("n1").AllocCPUs)
	}
	tc.srv.Kick()
	node.noLaunch()
	if err := node.end(first, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	if l := node.waitLaunch(); l.JobID != second {
		t.Fatalf("launched %d after the first ended, want %d", l.JobID, second)
	}
	// Raising the limit lets a third start beside the second.
	third := tc.submit(script("third"))
	tc.waitJob(third, "the policy reason", func(j api.Job) bool { return j.Reason == api.ReasonPolicyMaxCPUs })
	mustPolicy(t, tc, api.Policy{Kind: api.PolicyUser, Name: "root", Limits: api.Limits{MaxCPUs: 2}})
	if l := node.waitLaunch(); l.JobID != third {
		t.Fatalf("launched %d after the limit was raised", l.JobID)
	}
}

// TestPolicySubmitRefusals: per-job maxima and the pending maximum
// refuse at submit, with one clear message, storing nothing.
func TestPolicySubmitRefusals(t *testing.T) {
	tc := MustServer(t) // no nodes: jobs stay pending
	mustPolicy(t, tc, api.Policy{Kind: api.PolicyUser, Name: "root",
		Limits: api.Limits{MaxCPUsPerJob: 2, MaxMemPerJob: 1 << 30, MaxPendingJobs: 2}})
	big := script("big")
	big.CPUs = 3
	fat := script("fat")
	fat.MemBytes = 2 << 30
	for _, c := range []struct {
		spec api.JobSpec
		want string
	}{
		{big, "asks for 3 CPUs; the policy of user root allows at most 2 per job"},
		{fat, "asks for 2G of memory; the policy of user root allows at most 1G per job"},
	} {
		_, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: c.spec})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("submit %s: %v, want %q", c.spec.Name, err, c.want)
		}
	}
	tc.submit(script("a"))
	tc.submit(script("b"))
	if _, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: script("c")}); err == nil ||
		!strings.Contains(err.Error(), "has 2 pending jobs; the policy allows at most 2") {
		t.Errorf("third pending job: %v", err)
	}
	jobs, _ := tc.client.Jobs(context.Background(), api.JobFilter{All: true})
	if len(jobs) != 2 {
		t.Errorf("%d jobs stored, want 2", len(jobs))
	}
	ps, err := tc.client.Policies(context.Background())
	if err != nil || len(ps) != 1 || ps[0].Limits.MaxPendingJobs != 2 {
		t.Errorf("policies %+v, %v", ps, err)
	}
	// Policies survive a restart.
	tc.Restart()
	if ps, _ := tc.client.Policies(context.Background()); len(ps) != 1 {
		t.Errorf("after restart: %+v", ps)
	}
}

// TestUsageDeltas is acceptance item 5: the numbers rise by exactly the
// job's request when it starts and fall by exactly as much when it ends.
func TestUsageDeltas(t *testing.T) {
	tc := MustServer(t)
	node := newFakeNode(tc, "n1", 8, 16<<30)
	node.register()
	mustPolicy(t, tc, api.Policy{Kind: api.PolicyUser, Name: "root", Limits: api.Limits{MaxCPUs: 6, MaxMemBytes: 8 << 30}})
	before := mustUsage(t, tc)
	if p := before.Partitions[0]; p.Total.CPUs != 8 || p.Total.MemBytes != 16<<30 || p.Allocated.CPUs != 0 {
		t.Fatalf("before: %+v", p)
	}
	if u := before.Users[0]; u.User != "root" || u.Allowed.CPUs != 6 || u.Allowed.MemBytes != 8<<30 {
		t.Fatalf("before: %+v", u)
	}
	spec := script("sized")
	spec.CPUs, spec.MemBytes = 3, 1536<<20
	id := tc.submit(spec)
	node.waitLaunch()
	tc.waitJob(id, "running", inState(api.StateRunning))
	during := mustUsage(t, tc)
	dp := during.Partitions[0].Allocated
	du := during.Users[0].Allocated
	if dp.CPUs-before.Partitions[0].Allocated.CPUs != 3 || dp.MemBytes-before.Partitions[0].Allocated.MemBytes != 1536<<20 {
		t.Errorf("partition rose by %+v, want 3 CPUs and 1.5G", dp)
	}
	if du.CPUs != 3 || du.MemBytes != 1536<<20 || during.Users[0].RunningJobs != 1 {
		t.Errorf("user holds %+v", during.Users[0])
	}
	if err := node.end(id, api.StateCompleted, 0); err != nil {
		t.Fatal(err)
	}
	tc.waitJob(id, "ended", inState(api.StateCompleted))
	after := mustUsage(t, tc)
	if after.Partitions[0].Allocated != before.Partitions[0].Allocated || after.Users[0].Allocated != before.Users[0].Allocated {
		t.Errorf("after: %+v, want back to %+v", after, before)
	}
}

// TestEnvironmentSubmitAndLaunch: the image and mounts reach the node;
// names are checked; no name gets a random one.
func TestEnvironmentSubmitAndLaunch(t *testing.T) {
	tc := MustServer(t)
	node := newFakeNode(tc, "n1", 2, 4<<30)
	node.set(func(f *fakeNode) { f.mountRoots = []string{"/data"} }) // else submit refuses the mount
	node.register()
	spec := script("env.job-1")
	spec.ContainerImage = "127.0.0.1:5000/tensorflow:2.2"
	spec.Mounts = []api.Mount{{Source: "/data/alice", Target: "/data", ReadOnly: true}}
	id := tc.submit(spec)
	l := node.waitLaunch()
	if l.JobID != id || l.Image != spec.ContainerImage || len(l.Mounts) != 1 || l.Mounts[0] != spec.Mounts[0] {
		t.Fatalf("launch %+v", l)
	}
	for _, c := range []struct {
		mut  func(*api.JobSpec)
		want string
	}{
		{func(s *api.JobSpec) { s.Name = "two\nlines" }, "invalid --job-name"},
		{func(s *api.JobSpec) { s.ContainerImage = "Bad Image" }, "invalid image reference"},
		{func(s *api.JobSpec) { s.Mounts = []api.Mount{{Source: "rel", Target: "/x"}} }, "invalid --mount"},
	} {
		s := script("x")
		c.mut(&s)
		if _, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: s}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", s, err, c.want)
		}
	}
	unnamed := script("")
	if j := tc.job(tc.submit(unnamed)); j.Name == "" || strings.ContainsAny(j.Name, " /") {
		t.Errorf("an unnamed job is called %q", j.Name)
	}
}

// TestAdminOnly: only root changes policies and images, sees others'
// usage, and reads others' logs.
func TestAdminOnly(t *testing.T) {
	tc := MustServer(t)
	id := tc.submit(script("roots"))
	alice := peer{UID: 4242, GID: 4242}
	call := func(h callerHandler, method, target string, body any, who peer) (int, string) {
		var b strings.Builder
		if body != nil {
			json.NewEncoder(&b).Encode(body)
		}
		req := httptest.NewRequest(method, target, strings.NewReader(b.String()))
		if strings.Contains(target, "/jobs/") {
			req.SetPathValue("id", strings.Split(strings.TrimPrefix(target, "/v1/jobs/"), "/")[0])
		}
		rec := httptest.NewRecorder()
		h(rec, req, who)
		return rec.Code, rec.Body.String()
	}
	for _, c := range []struct {
		name   string
		h      callerHandler
		method string
		target string
		body   any
	}{
		{"set policy", policiesEndpoint{tc.srv}.set, "POST", "/v1/policies", api.Policy{Kind: "user", Name: "x", Limits: api.Limits{MaxCPUs: 1}}},
		{"pull", imagesEndpoint{tc.srv}.op, "POST", "/v1/images", api.ImageRequest{Op: api.ImagePull, Ref: "busybox:1"}},
		{"usage of all", policiesEndpoint{tc.srv}.usage, "GET", "/v1/usage?all=1", nil},
		{"usage of root", policiesEndpoint{tc.srv}.usage, "GET", "/v1/usage?user=root", nil},
		{"root's log", jobsEndpoint{tc.srv}.log, "GET", "/v1/jobs/" + formatID(id) + "/log", nil},
	} {
		if code, body := call(c.h, c.method, c.target, c.body, alice); code != http.StatusForbidden {
			t.Errorf("%s as uid 4242: %d %s", c.name, code, body)
		}
	}
	// Root reads a pending job's (empty) log; its own usage is allowed to anyone.
	if code, body := call(jobsEndpoint{tc.srv}.log, "GET", "/v1/jobs/"+formatID(id)+"/log", nil, peer{}); code != http.StatusOK || !strings.Contains(body, `"state":"PENDING"`) {
		t.Errorf("root's own log: %d %s", code, body)
	}
	if code, _ := call(policiesEndpoint{tc.srv}.usage, "GET", "/v1/usage", nil, alice); code != http.StatusOK {
		t.Errorf("own usage: %d", code)
	}
}

func formatID(id uint64) string { return strconv.FormatUint(id, 10) }

// TestVisibility: users see only their own jobs in queue and show unless
// SharedView=YES; AdminUsers and root see all.
func TestVisibility(t *testing.T) {
	get := func(tc *testCluster, h callerHandler, target, id string, who peer) (int, string) {
		req := httptest.NewRequest("GET", target, nil)
		if id != "" {
			req.SetPathValue("id", id)
		}
		rec := httptest.NewRecorder()
		h(rec, req, who)
		return rec.Code, rec.Body.String()
	}
	daemon, bin := peer{UID: 1, GID: 1}, peer{UID: 2, GID: 2}
	for _, c := range []struct {
		name, conf  string
		binSeesRoot bool
	}{
		{"private", "PartitionName=batch Nodes=ALL\nAdminUsers=daemon\n", false},
		{"shared", "PartitionName=batch Nodes=ALL\nSharedView=YES\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tc := MustServer(t, withPartitions(c.conf))
			id := formatID(tc.submit(script("roots")))
			code, body := get(tc, jobsEndpoint{tc.srv}.list, "/v1/jobs", "", bin)
			if sees := strings.Contains(body, `"name":"roots"`); code != 200 || sees != c.binSeesRoot {
				t.Errorf("bin lists root's job: %v (%d), want %v", sees, code, c.binSeesRoot)
			}
			if code, _ := get(tc, jobsEndpoint{tc.srv}.get, "/v1/jobs/"+id, id, bin); (code == 200) != c.binSeesRoot {
				t.Errorf("bin shows root's job: %d", code)
			}
			tc.client.Cancel(context.Background(), api.CancelRequest{IDs: []uint64{mustID(t, id)}})
			tc.waitJob(mustID(t, id), "cancelled", inState(api.StateCancelled))
			code, body = get(tc, acctEndpoint{tc.srv}.history, "/v1/acct", "", bin)
			if sees := strings.Contains(body, `"roots"`); code != 200 || sees != c.binSeesRoot {
				t.Errorf("bin's accounting shows root's job: %v (%d %s), want %v", sees, code, body, c.binSeesRoot)
			}
			if code, body := get(tc, acctEndpoint{tc.srv}.history, "/v1/acct", "", daemon); code != 200 || !strings.Contains(body, `"roots"`) && c.name == "private" {
				t.Errorf("the admin's accounting: %d %s", code, body)
			}
			if code, _ := get(tc, jobsEndpoint{tc.srv}.log, "/v1/jobs/"+id+"/log", id, bin); code != http.StatusForbidden {
				t.Errorf("bin reads root's log: %d (logs are owner or admin only)", code)
			}
			if c.name == "private" {
				if code, body := get(tc, jobsEndpoint{tc.srv}.list, "/v1/jobs?all=1", "", daemon); code != 200 || !strings.Contains(body, `"name":"roots"`) {
					t.Errorf("the configured admin does not see root's job: %d %s", code, body)
				}
				// The job never ran: not found, rather than forbidden.
				if code, body := get(tc, jobsEndpoint{tc.srv}.log, "/v1/jobs/"+id+"/log", id, daemon); code != http.StatusNotFound || !strings.Contains(body, "never ran") {
					t.Errorf("the configured admin reading root's log: %d %s", code, body)
				}
			}
		})
	}
}

func mustID(t *testing.T, s string) uint64 {
	t.Helper()
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
