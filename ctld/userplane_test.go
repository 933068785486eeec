package ctld

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/user"
	"strconv"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

const nobody = 65534

// callAs sends a request straight to the user-plane handler with an
// injected peer identity, as if uid had connected to the socket.
func callAs(t testing.TB, tc *testCluster, uid uint32, method, path string, body any) (int, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if body != nil {
		if s, ok := body.(string); ok {
			buf.WriteString(s)
		} else if err := json.NewEncoder(&buf).Encode(body); err != nil {
			t.Fatal(err)
		}
	}
	req := httptest.NewRequest(method, path, &buf)
	req = req.WithContext(withPeer(req.Context(), peer{UID: uid, GID: uid}))
	rec := httptest.NewRecorder()
	userHandler(tc.srv).ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

func errorText(t testing.TB, body []byte) string {
	t.Helper()
	var e api.Error
	if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
		t.Fatalf("body %q is not an api.Error", body)
	}
	return e.Error
}

func TestPeerCredentialIdentity(t *testing.T) {
	tc := MustServer(t)
	var ping pingResponse
	if err := tc.client.Do(context.Background(), http.MethodGet, "/v1/ping", nil, &ping); err != nil {
		t.Fatal(err)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	if want := uint32(os.Getuid()); ping.UID != want || ping.User != me.Username {
		t.Fatalf("ping = %+v, want uid %d user %s", ping, want, me.Username)
	}
	id := tc.submit(script("mine"))
	if j := tc.job(id); j.UID != uint32(os.Getuid()) || j.User != me.Username || j.GID == 0 && me.Gid != "0" {
		t.Fatalf("job owner = uid %d user %s gid %d", j.UID, j.User, j.GID)
	}
	if st, err := os.Stat(tc.srv.SocketPath()); err != nil || st.Mode().Perm() != 0o666 {
		t.Fatalf("socket mode = %v, %v; want 0666", st.Mode().Perm(), err)
	}
}

func TestOnBehalfOf(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: the real-socket half submits as root on behalf of nobody")
	}
	tc := MustServer(t)
	target := uint32(nobody)
	id, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: script("for-nobody"), OnBehalfOf: &target})
	if err != nil {
		t.Fatalf("root on behalf of nobody: %v", err)
	}
	if j := tc.job(id); j.UID != nobody || j.User != "nobody" {
		t.Fatalf("job owned by uid %d %s, want nobody", j.UID, j.User)
	}
	// A non-root caller claiming another identity is refused, and nothing
	// is stored.
	code, body := callAs(t, tc, 1000, http.MethodPost, "/v1/jobs", api.SubmitRequest{Spec: script("x"), OnBehalfOf: &target})
	if code != http.StatusForbidden || !strings.Contains(errorText(t, body), "only root may submit on behalf of another user (you are uid 1000)") {
		t.Fatalf("non-root OnBehalfOf: %d %s", code, body)
	}
	all, _ := tc.client.Jobs(context.Background(), api.JobFilter{All: true})
	if len(all) != 1 {
		t.Fatalf("%d jobs stored, want only the first", len(all))
	}
	ghost := uint32(4242424)
	_, err = tc.client.Submit(context.Background(), api.SubmitRequest{Spec: script("x"), OnBehalfOf: &ghost})
	if statusOf(err) != http.StatusBadRequest || !strings.Contains(err.Error(), "uid 4242424 has no user account") {
		t.Fatalf("unknown target uid: %v", err)
	}
}

func TestSubmitValidation(t *testing.T) {
	tc := MustServer(t, withPartitions(
		"PartitionName=batch Nodes=n[1-2] Default=YES MaxTime=1-00:00:00 DefaultTime=1:00:00 DefMemPerCPU=512M\n"+
			"PartitionName=gpu Nodes=g1\n"))
	newFakeNode(tc, "n1", 8, 16<<30).register()
	newFakeNode(tc, "n2", 4, 64<<30).register()
	spec := func(mod func(*api.JobSpec)) api.JobSpec {
		s := api.JobSpec{Script: "#!/bin/sh\ntrue\n", CPUs: 1, WorkDir: "/tmp"}
		mod(&s)
		return s
	}
	tests := []struct {
		name    string
		spec    api.JobSpec
		wantErr string
	}{
		{"zero cpus", spec(func(s *api.JobSpec) { s.CPUs = 0 }), "cpus must be at least 1 (got 0)"},
		{"negative cpus", spec(func(s *api.JobSpec) { s.CPUs = -2 }), "cpus must be at least 1 (got -2)"},
		{"negative memory", spec(func(s *api.JobSpec) { s.MemBytes = -1 }), "memory must not be negative"},
		{"negative shm", spec(func(s *api.JobSpec) { s.ShmBytes = -1 }), "shm size must not be negative"},
		{"negative nodes", spec(func(s *api.JobSpec) { s.Nodes = -1 }), "nodes must be at least 1 (got -1)"},
		{"negative time", spec(func(s *api.JobSpec) { s.TimeLimit = -5 }), "time limit must not be negative"},
		{"empty script", spec(func(s *api.JobSpec) { s.Script = " \n" }), "script is empty"},
		{"relative workdir", spec(func(s *api.JobSpec) { s.WorkDir = "rel/dir" }), `work directory must be an absolute path (got "rel/dir")`},
		{"no workdir", spec(func(s *api.JobSpec) { s.WorkDir = "" }), "work directory must be an absolute path"},
		{"bad env", spec(func(s *api.JobSpec) { s.Env = []string{"NOEQUALS"} }), `environment entry "NOEQUALS" is not KEY=VALUE`},
		{"unknown partition", spec(func(s *api.JobSpec) { s.Partition = "nope" }), "partition nope does not exist (partitions: batch, gpu)"},
		{"over MaxTime", spec(func(s *api.JobSpec) { s.TimeLimit = 2 * 86400 }), "time limit 2-00:00:00 is over partition batch's MaxTime of 1-00:00:00"},
		{"too many cpus", spec(func(s *api.JobSpec) { s.CPUs = 64 }), "job asks for 64 CPUs per node but the largest node in partition batch has 8: it could never run"},
		{"too much memory", spec(func(s *api.JobSpec) { s.MemBytes = 128 << 30 }), "job asks for 128G memory per node but the largest node in partition batch has 64G: it could never run"},
		{"no node has both", spec(func(s *api.JobSpec) { s.CPUs, s.MemBytes = 8, 32<<30 }), "job asks for 8 CPUs and 32G memory per node but no node in partition batch has both: it could never run"},
		{"too many nodes", spec(func(s *api.JobSpec) { s.Nodes, s.CPUs = 2, 6 }), "job asks for 2 nodes but partition batch has 1 that can hold it: it could never run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: tt.spec})
			if statusOf(err) != http.StatusBadRequest || err.Error() != tt.wantErr && !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v (status %d), want 400 %q", err, statusOf(err), tt.wantErr)
			}
		})
	}
	all, _ := tc.client.Jobs(context.Background(), api.JobFilter{All: true})
	if len(all) != 0 {
		t.Fatalf("rejected submits stored %d jobs", len(all))
	}

	// Defaults: partition, nodes, time, memory from DefMemPerCPU, name.
	j := tc.job(tc.submit(spec(func(s *api.JobSpec) { s.CPUs = 2 })))
	if j.Partition != "batch" || j.NodeCount != 1 || j.TimeLimit != 3600 || j.MemBytes != 2*512<<20 || j.Name != "script" ||
		j.Spec.Partition != "batch" || j.Spec.MemBytes != j.MemBytes || j.Spec.TimeLimit != 3600 || j.Spec.Nodes != 1 {
		t.Fatalf("defaults not filled: %+v", j)
	}
	// The gpu partition has no known node yet: anything is accepted, and
	// memory defaults to 1 GiB per CPU.
	j = tc.job(tc.submit(spec(func(s *api.JobSpec) { s.Partition, s.CPUs = "gpu", 100 })))
	if j.MemBytes != 100<<30 || j.TimeLimit != 0 {
		t.Fatalf("gpu defaults: mem %d time %d", j.MemBytes, j.TimeLimit)
	}
}

func TestDefaultMemoryFromSmallestNode(t *testing.T) {
	tc := MustServer(t)
	newFakeNode(tc, "a", 4, 8<<30).register() // 2G per CPU
	newFakeNode(tc, "b", 8, 8<<30).register() // 1G per CPU
	j := tc.job(tc.submit(api.JobSpec{Script: "x", CPUs: 3, WorkDir: "/"}))
	if j.MemBytes != 3<<30 || j.Partition != "batch" {
		t.Fatalf("mem %d partition %s, want 3G in batch", j.MemBytes, j.Partition)
	}
}

func TestRequestBodies(t *testing.T) {
	tc := MustServer(t)
	tests := []struct {
		name     string
		body     string
		wantCode int
		wantErr  string
	}{
		{"unknown field", `{"spec":{"script":"x","cpus":1,"work_dir":"/","colour":"red"}}`, 400, `unknown field "colour"`},
		{"identity claim", `{"spec":{"script":"x","cpus":1,"work_dir":"/"},"uid":0}`, 400, `unknown field "uid"`},
		{"empty", ``, 400, "request body is empty"},
		{"not json", `hello`, 400, "bad request body"},
		{"trailing data", `{"spec":{"script":"x","cpus":1,"work_dir":"/"}} {}`, 400, "unexpected data after the JSON object"},
		{"too large", `{"spec":{"script":"` + strings.Repeat("x", 5<<20) + `"}}`, 413, "larger than 4 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := callAs(t, tc, 0, http.MethodPost, "/v1/jobs", tt.body)
			if code != tt.wantCode || !strings.Contains(errorText(t, body), tt.wantErr) {
				t.Fatalf("got %d %s, want %d %q", code, body, tt.wantCode, tt.wantErr)
			}
		})
	}
	code, body := callAs(t, tc, 0, http.MethodPost, "/v1/jobs/cancel", `{"ids":[1],"force":true}`)
	if code != 400 || !strings.Contains(errorText(t, body), `unknown field "force"`) {
		t.Fatalf("cancel with unknown field: %d %s", code, body)
	}
}

func TestRoutesAndErrors(t *testing.T) {
	tc := MustServer(t)
	tests := []struct {
		method, path string
		wantCode     int
		wantErr      string
	}{
		{"GET", "/v1/jobs/42", 404, "job 42 does not exist"},
		{"GET", "/v1/jobs/abc", 400, `invalid job id "abc"`},
		{"GET", "/v1/jobs?colour=red", 400, `unknown query parameter "colour"`},
		{"GET", "/v1/jobs?state=SLEEPING", 400, `unknown job state "SLEEPING"`},
		{"GET", "/v1/jobs?id=x", 400, `invalid job id "x"`},
		{"GET", "/v1/jobs?all=maybe", 400, `invalid all="maybe"`},
		{"GET", "/v2/nothing", 404, "no such endpoint: GET /v2/nothing"},
		{"POST", "/v1/jobs/cancel", 400, "request body is empty"},
	}
	for _, tt := range tests {
		code, body := callAs(t, tc, 0, tt.method, tt.path, nil)
		if code != tt.wantCode || !strings.Contains(errorText(t, body), tt.wantErr) {
			t.Errorf("%s %s: %d %s, want %d %q", tt.method, tt.path, code, body, tt.wantCode, tt.wantErr)
		}
	}
	// Without peer credentials (not the Unix socket) or a remote
	// credential nothing is served: 401, as docs/security.md says.
	rec := httptest.NewRecorder()
	userHandler(tc.srv).ServeHTTP(rec, httptest.NewRequest("GET", "/v1/ping", nil))
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("no identity: %d %s", rec.Code, rec.Body)
	}
	parts, err := tc.client.Partitions(context.Background())
	if err != nil || len(parts) != 1 || parts[0].Name != "batch" || !parts[0].AllNodes || !parts[0].Default {
		t.Fatalf("partitions = %+v, %v", parts, err)
	}
}

func TestCancelRules(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: jobs are submitted on behalf of nobody")
	}
	tc := MustServer(t) // no nodes: every job stays pending
	nb := uint32(nobody)
	submitAs := func(uid *uint32, name string) uint64 {
		id, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: script(name), OnBehalfOf: uid})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	rootJob := submitAs(nil, "r")
	nbJob := submitAs(&nb, "n1")
	nbJob2 := submitAs(&nb, "n2")
	nbJob3 := submitAs(&nb, "other")
	cancelAs := func(uid uint32, req api.CancelRequest) (int, api.CancelResponse, string) {
		code, body := callAs(t, tc, uid, http.MethodPost, "/v1/jobs/cancel", req)
		var resp api.CancelResponse
		if code != 200 {
			return code, resp, errorText(t, body)
		}
		if err := json.Unmarshal(body, &resp); err != nil {
			t.Fatal(err)
		}
		return code, resp, ""
	}
	tests := []struct {
		name      string
		uid       uint32
		req       api.CancelRequest
		cancelled []uint64
		errs      map[uint64]string
	}{
		{"not mine", nobody, api.CancelRequest{IDs: []uint64{rootJob}}, nil,
			map[uint64]string{rootJob: fmt.Sprintf("job %d belongs to root", rootJob)}},
		{"missing", nobody, api.CancelRequest{IDs: []uint64{999}}, nil, map[uint64]string{999: "job 999 does not exist"}},
		{"mine", nobody, api.CancelRequest{IDs: []uint64{nbJob}}, []uint64{nbJob}, nil},
		{"again", nobody, api.CancelRequest{IDs: []uint64{nbJob}}, nil,
			map[uint64]string{nbJob: fmt.Sprintf("job %d already finished (CANCELLED)", nbJob)}},
		{"filter not matching", nobody, api.CancelRequest{IDs: []uint64{nbJob2}, Name: "zzz"}, nil,
			map[uint64]string{nbJob2: fmt.Sprintf("job %d does not match the given filters", nbJob2)}},
		{"filter reaches only own jobs", nobody, api.CancelRequest{States: []api.JobState{api.StatePending}, Name: "n2"}, []uint64{nbJob2}, nil},
		{"filter naming another user", nobody, api.CancelRequest{User: "root"}, nil,
			map[uint64]string{rootJob: fmt.Sprintf("job %d belongs to root", rootJob)}},
		{"root cancels anyone", 0, api.CancelRequest{IDs: []uint64{nbJob3, rootJob, nbJob3}, States: []api.JobState{"pd"}},
			[]uint64{rootJob, nbJob3}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, resp, msg := cancelAs(tt.uid, tt.req)
			if code != 200 {
				t.Fatalf("cancel: %d %s", code, msg)
			}
			if fmt.Sprint(resp.Cancelled) != fmt.Sprint(append([]uint64{}, tt.cancelled...)) || fmt.Sprint(resp.Errors) != fmt.Sprint(tt.errs) {
				t.Fatalf("got cancelled %v errors %v; want %v %v", resp.Cancelled, resp.Errors, tt.cancelled, tt.errs)
			}
			// Gone: the refusals scancel passes over, jobs that ended or never were.
			var gone []uint64
			for id, msg := range tt.errs {
				if strings.Contains(msg, "does not exist") || strings.Contains(msg, "already finished") {
					gone = append(gone, id)
				}
			}
			if fmt.Sprint(resp.Gone) != fmt.Sprint(gone) || resp.GoneCount != len(gone) {
				t.Fatalf("gone %v (%d), want %v", resp.Gone, resp.GoneCount, gone)
			}
		})
	}
	for _, id := range []uint64{rootJob, nbJob, nbJob2, nbJob3} {
		if j := tc.job(id); j.State != api.StateCancelled || j.EndTime == nil || len(j.History) != 2 {
			t.Errorf("job %d: state %s end %v history %v", id, j.State, j.EndTime, j.History)
		}
	}
	if code, _, msg := cancelAs(nobody, api.CancelRequest{}); code != 400 || !strings.Contains(msg, "nothing to cancel") {
		t.Fatalf("empty cancel: %d %s", code, msg)
	}
	if code, _, msg := cancelAs(nobody, api.CancelRequest{States: []api.JobState{"BOGUS"}}); code != 400 || !strings.Contains(msg, "unknown job state") {
		t.Fatalf("bad state filter: %d %s", code, msg)
	}
}

func TestListFilters(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: jobs are submitted on behalf of nobody")
	}
	tc := MustServer(t)
	node := newFakeNode(tc, "n1", 1, 1<<30)
	node.register()
	nb := uint32(nobody)
	running := tc.submit(script("run"))
	node.waitLaunch()
	pendingRoot := tc.submit(script("wait"))
	pendingNobody, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: script("nb"), OnBehalfOf: &nb})
	if err != nil {
		t.Fatal(err)
	}
	done := tc.submit(script("gone"))
	if _, err := tc.client.Cancel(context.Background(), api.CancelRequest{IDs: []uint64{done}}); err != nil {
		t.Fatal(err)
	}
	tc.waitJob(running, "running", inState(api.StateRunning))
	tests := []struct {
		query string
		want  []uint64
	}{
		{"", []uint64{running, pendingRoot, pendingNobody}},
		{"?all=1", []uint64{running, pendingRoot, pendingNobody, done}},
		{"?user=nobody", []uint64{pendingNobody}},
		{"?user=nobody&user=root", []uint64{running, pendingRoot, pendingNobody}},
		{"?user=root&state=PD", []uint64{pendingRoot}},
		{"?state=RUNNING&state=CANCELLED", []uint64{running, done}},
		{"?state=R,CA", []uint64{running, done}},
		{fmt.Sprintf("?id=%d", done), []uint64{done}},
		{fmt.Sprintf("?id=%d&id=%d&state=PENDING", done, pendingRoot), []uint64{pendingRoot}},
		{"?user=ghost", []uint64{}},
	}
	for _, tt := range tests {
		// As root: a user sees only their own jobs (see TestVisibility).
		code, body := callAs(t, tc, 0, http.MethodGet, "/v1/jobs"+tt.query, nil)
		var jobs []api.Job
		if code != 200 || json.Unmarshal(body, &jobs) != nil {
			t.Fatalf("%s: %d %s", tt.query, code, body)
		}
		var got []uint64
		for _, j := range jobs {
			got = append(got, j.ID)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) || jobs == nil {
			t.Errorf("GET /v1/jobs%s = %v, want %v", tt.query, got, tt.want)
		}
	}
	// The client's filter encoding reaches the same handler.
	jobs, err := tc.client.Jobs(context.Background(), api.JobFilter{Users: []string{"root"}, States: []api.JobState{api.StateRunning}})
	if err != nil || len(jobs) != 1 || jobs[0].ID != running || strconv.Itoa(len(jobs[0].Nodes)) != "1" {
		t.Fatalf("client Jobs = %+v, %v", jobs, err)
	}
}
