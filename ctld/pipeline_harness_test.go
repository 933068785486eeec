package ctld

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
)

// Helpers shared by the pipeline tests (arrays, dependencies, control,
// accounting).

// arraySpec is script(name) as an array job with the given --array.
func arraySpec(t testing.TB, name, indexes string) api.JobSpec {
	t.Helper()
	a, _, err := jobspec.ParseArray(indexes)
	if err != nil {
		t.Fatal(err)
	}
	spec := script(name)
	spec.Array = &a
	return spec
}

// dependent is script(name) depending on dep (sbatch syntax).
func dependent(t testing.TB, name, dep string) api.JobSpec {
	t.Helper()
	d, _, err := jobspec.ParseDependency(dep)
	if err != nil {
		t.Fatal(err)
	}
	spec := script(name)
	spec.Dependency = d
	return spec
}

// submitErr submits and returns the refusal.
func (tc *testCluster) submitErr(spec api.JobSpec) error {
	_, err := tc.client.Submit(context.Background(), api.SubmitRequest{Spec: spec})
	return err
}

// control runs hold, release or requeue as root.
func (tc *testCluster) control(action string, ids ...uint64) *api.JobsResponse {
	tc.t.Helper()
	resp, err := tc.client.Control(context.Background(), action, api.JobsRequest{IDs: ids})
	if err != nil {
		tc.t.Fatalf("%s %v: %v", action, ids, err)
	}
	return resp
}

// controlAs runs hold, release or requeue as uid and returns the answer.
func controlAs(t testing.TB, tc *testCluster, uid uint32, action string, req api.JobsRequest) api.JobsResponse {
	t.Helper()
	code, body := callAs(t, tc, uid, http.MethodPost, "/v1/jobs/"+action, req)
	var resp api.JobsResponse
	if code != http.StatusOK || json.Unmarshal(body, &resp) != nil {
		t.Fatalf("%s as %d: %d %s", action, uid, code, body)
	}
	return resp
}

// jobRefState fetches a job by reference (123_4).
func (tc *testCluster) jobRef(ref string) api.Job {
	tc.t.Helper()
	j, err := tc.client.JobRef(context.Background(), ref)
	if err != nil {
		tc.t.Fatalf("job %s: %v", ref, err)
	}
	return *j
}

// launchedIDs drains n launches and returns their job IDs, sorted.
func (f *fakeNode) launchedIDs(n int) []uint64 {
	f.t.Helper()
	var ids []uint64
	for range n {
		ids = append(ids, f.waitLaunch().JobID)
	}
	slices.Sort(ids)
	return ids
}

func reasonIs(r api.Reason) func(api.Job) bool {
	return func(j api.Job) bool { return j.Reason == r }
}

func ptr[T any](v T) *T { return &v }
