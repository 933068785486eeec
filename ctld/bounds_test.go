package ctld

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/authz"
)

// TestEveryRouteHasABound: every route of the authorization matrix
// declares what one request may cost (authz.Bounds), and the bound holds: a
// body one byte over it is 413, a query one value over it is 400, a list
// of one ref over it is 400. A route added without a bound fails here.
func TestEveryRouteHasABound(t *testing.T) {
	tc := MustServer(t)
	for pattern := range authz.Bounds {
		if _, ok := authz.UserRoutes[pattern]; !ok {
			t.Errorf("bound for %s, which is no route", pattern)
		}
	}
	for pattern := range authz.UserRoutes {
		b, ok := authz.Bounds[pattern]
		if !ok || b.Answer == "" {
			t.Errorf("%s declares no bound (add it to authz.Bounds)", pattern)
			continue
		}
		method, path, _ := strings.Cut(pattern, " ")
		path = strings.ReplaceAll(path, "{id}", "1")
		if method == "POST" && b.Body == 0 || method == "GET" && b.Body != 0 {
			t.Errorf("%s: body bound %d: POST routes read a body, GET routes none", pattern, b.Body)
		}
		if b.Body > 0 {
			over := `{"x":"` + strings.Repeat("x", int(b.Body)) + `"}`
			if code, body := callAs(t, tc, 0, method, path, over); code != http.StatusRequestEntityTooLarge {
				t.Errorf("%s with a %d-byte body: %d %.200s, want 413", pattern, len(over), code, body)
			}
		}
		query := "?id=" + strings.Repeat("1,", max(b.Query, 1)) + "1"
		if code, body := callAs(t, tc, 0, method, path+query, nil); code != http.StatusBadRequest ||
			!strings.Contains(errorText(t, body), "values; at most") {
			t.Errorf("%s with %d query values: %d %.200s, want 400", pattern, max(b.Query, 1)+1, code, body)
		}
		if b.Refs > 0 {
			ids := make([]uint64, b.Refs+1)
			names := make([]string, b.Refs+1)
			for i := range ids {
				ids[i], names[i] = uint64(i+1), fmt.Sprintf("n%d", i)
			}
			var req any = api.JobsRequest{IDs: ids}
			if strings.HasPrefix(path, "/v1/nodes/") {
				req = api.DrainRequest{Nodes: names, Reason: "test"}
				if strings.HasSuffix(path, "resume") {
					req = api.ResumeRequest{Nodes: names}
				}
			}
			code, body := callAs(t, tc, 0, method, path, req)
			if code != http.StatusBadRequest || !strings.Contains(errorText(t, body), "send them in batches") {
				t.Errorf("%s naming %d: %d %.200s, want 400", pattern, b.Refs+1, code, body)
			}
		}
	}
}

// TestCancelManyIDs: the attack of issue 11 (a cancel of 499,999 IDs
// answered 18 MB and cost ctld 170 MB) gets one short refusal, and a
// cancel of the most IDs allowed, none of them real, answers a bounded
// list with counts, not a line per ID.
func TestCancelManyIDs(t *testing.T) {
	tc := MustServer(t)
	ids := make([]uint64, 499999)
	for i := range ids {
		ids[i] = uint64(i + 1)
	}
	code, body := callAs(t, tc, nobody, "POST", "/v1/jobs/cancel", api.CancelRequest{IDs: ids})
	if code != http.StatusRequestEntityTooLarge || len(body) > 200 {
		t.Errorf("cancel of 499,999 IDs: %d, %d bytes %.200s; want one short 413", code, len(body), body)
	}
	// Just over the limit in count, within it in bytes: 400.
	code, body = callAs(t, tc, nobody, "POST", "/v1/jobs/cancel", api.CancelRequest{IDs: ids[:api.MaxRefsPerRequest+1]})
	if code != http.StatusBadRequest || !strings.Contains(errorText(t, body), "more than 10000 jobs in one request") {
		t.Errorf("cancel of 10,001 IDs: %d %.200s", code, body)
	}
	// The most allowed: answered, with 100 reasons and the count.
	code, body = callAs(t, tc, nobody, "POST", "/v1/jobs/cancel", api.CancelRequest{IDs: ids[:api.MaxRefsPerRequest]})
	var resp api.CancelResponse
	if err := json.Unmarshal(body, &resp); code != http.StatusOK || err != nil {
		t.Fatalf("cancel of 10,000 IDs: %d %.200s", code, body)
	}
	if len(resp.Errors) != api.MaxListedErrors || resp.ErrorCount != api.MaxRefsPerRequest || len(body) > 8<<10 ||
		resp.Errors[1] != "job 1 does not exist" || len(resp.Gone) != api.MaxListedErrors || resp.GoneCount != api.MaxRefsPerRequest {
		t.Errorf("cancel of 10,000 missing IDs: %d errors listed, %d counted, %d bytes; want 100, 10000, under 8 KiB",
			len(resp.Errors), resp.ErrorCount, len(body))
	}
}

// TestControlManyIDs: hold, release and requeue list the first 100
// refusals and count them all.
func TestControlManyIDs(t *testing.T) {
	tc := MustServer(t)
	ids := make([]uint64, 500)
	for i := range ids {
		ids[i] = uint64(i + 1)
	}
	for _, action := range []string{"hold", "release", "requeue"} {
		code, body := callAs(t, tc, nobody, "POST", "/v1/jobs/"+action, api.JobsRequest{IDs: ids})
		var resp api.JobsResponse
		if err := json.Unmarshal(body, &resp); code != 200 || err != nil || len(resp.Errors) != api.MaxListedErrors || resp.ErrorCount != 500 {
			t.Errorf("%s of 500 missing IDs: %d, %d listed, %d counted", action, code, len(resp.Errors), resp.ErrorCount)
		}
	}
}

// TestCancelFilterInBatches: a filter reaching more jobs than one commit
// ends (cancelBatch) cancels every one of them, and counts them.
func TestCancelFilterInBatches(t *testing.T) {
	tc := MustServer(t)
	n := cancelBatch + 50
	for range n {
		tc.submit(script("many"))
	}
	resp, err := tc.client.Cancel(t.Context(), api.CancelRequest{Name: "many"})
	if err != nil || resp.CancelledCount != n || len(resp.Cancelled) != n || resp.ErrorCount != 0 {
		t.Fatalf("cancel by name: %d listed, %d counted, %d errors, %v", len(resp.Cancelled), resp.CancelledCount, resp.ErrorCount, err)
	}
	jobs, err := tc.client.Jobs(t.Context(), api.JobFilter{States: []api.JobState{api.StateCancelled}})
	if err != nil || len(jobs) != n {
		t.Fatalf("%d jobs CANCELLED, want %d (%v)", len(jobs), n, err)
	}
}

// TestClientBatchesRefs: api.Client sends more refs than one request may
// name in batches, against the real bounds, and sums the answers: the
// first 100 refusals of each batch are listed, all are counted.
func TestClientBatchesRefs(t *testing.T) {
	tc := MustServer(t)
	real := tc.submit(script("real"))
	ids := []uint64{real}
	for id := uint64(1000); len(ids) < 2*api.MaxRefsPerRequest+1; id++ {
		ids = append(ids, id)
	}
	resp, err := tc.client.Cancel(t.Context(), api.CancelRequest{IDs: ids})
	if err != nil || resp.CancelledCount != 1 || len(resp.Cancelled) != 1 || resp.ErrorCount != len(ids)-1 ||
		len(resp.Errors) > 3*api.MaxListedErrors {
		t.Fatalf("cancel of %d IDs: %d cancelled, %d errors counted, %d listed, %v",
			len(ids), resp.CancelledCount, resp.ErrorCount, len(resp.Errors), err)
	}
	hold, err := tc.client.Control(t.Context(), "hold", api.JobsRequest{IDs: ids})
	if err != nil || hold.ErrorCount != len(ids) || len(hold.Errors) > 3*api.MaxListedErrors {
		t.Fatalf("hold of %d IDs: %d errors counted, %d listed, %v", len(ids), hold.ErrorCount, len(hold.Errors), err)
	}
}
