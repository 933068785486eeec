package ctld

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
)

// trackJobs puts jobs of uid with the given IDs straight into the
// queue's memory, in state st: copies of one job that passed admission,
// as a submit makes them. Long queues fill in a moment this way; the
// store does not have them (a commit that changes them writes them).
func trackJobs(tb testing.TB, tc *testCluster, uid uint32, spec api.JobSpec, st api.JobState, ids ...uint64) {
	tb.Helper()
	rec, err := tc.srv.checkSubmit(peer{}, api.SubmitRequest{Spec: spec, OnBehalfOf: &uid})
	if err != nil {
		tb.Fatal(err)
	}
	now := time.Now()
	tc.srv.mu.Lock()
	defer tc.srv.mu.Unlock()
	for _, id := range ids {
		j := &job{rec: *rec}
		j.rec.Job.ID, j.rec.Job.State = id, st
		if st.Terminal() {
			code := 0
			j.rec.Job.StartTime, j.rec.Job.EndTime, j.rec.Job.ExitCode = &now, &now, &code
		}
		tc.srv.q.track(j)
	}
}

// storeJobs stores n pending jobs of uid as a submit would, without
// telling anyone (no scheduling, no dashboard), and returns their IDs.
// Concurrent adds share the store's commits, so a thousand take moments.
func storeJobs(tb testing.TB, tc *testCluster, uid uint32, spec api.JobSpec, n int) []uint64 {
	tb.Helper()
	rec, err := tc.srv.checkSubmit(peer{}, api.SubmitRequest{Spec: spec, OnBehalfOf: &uid})
	if err != nil {
		tb.Fatal(err)
	}
	recs := make([]*store.JobRecord, n)
	errs := make(chan error, n)
	for i := range recs {
		r := *rec
		recs[i] = &r
		go func() { _, err := tc.srv.store.AddJob(recs[i]); errs <- err }()
	}
	for range n {
		if err := <-errs; err != nil {
			tb.Fatal(err)
		}
	}
	ids := make([]uint64, n)
	tc.srv.mu.Lock()
	for i, r := range recs {
		tc.srv.q.track(&job{rec: *r})
		ids[i] = r.Job.ID
	}
	tc.srv.mu.Unlock()
	return ids
}

// idRange is first, first+1, ..., first+n-1.
func idRange(first uint64, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = first + uint64(i)
	}
	return out
}

// pageAs asks GET /v1/jobs?query as uid for a page.
func pageAs(t *testing.T, tc *testCluster, uid uint32, query string) api.JobPage {
	t.Helper()
	var p api.JobPage
	if err := clientAs(userHandler(tc.srv), tc.srv.users, uid).Do(context.Background(), http.MethodGet, "/v1/jobs?"+query, nil, &p); err != nil {
		t.Fatalf("GET /v1/jobs?%s as uid %d: %v", query, uid, err)
	}
	return p
}

// pageRefs is each job's ID with its folded array tasks, as `corral queue`
// would name the row.
func pageRefs(jobs []api.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = fmt.Sprintf("%d[%s]%s", j.ID, j.ArrayTasks, j.State)
	}
	slices.Sort(out)
	return out
}

// A page (GET /v1/jobs?limit=N) holds the newest N jobs of each state the
// caller may see, newest first, and counts every one of them; another
// user's jobs are neither shown nor counted unless the caller may see
// everyone's; an array's pending tasks are one entry, as in the listing
// `corral queue` reads; and with a limit over the counts the page is that
// listing.
func TestJobPage(t *testing.T) {
	tc := MustServer(t, eventsOnly, withPartitions(matrixConf))
	arr := tc.submitFor(uidOwner, arraySpec(t, "arr", "0-9")) // IDs 1-10, all pending, folded
	trackJobs(t, tc, uidOwner, script("old"), api.StateCompleted, idRange(100, 300)...)
	trackJobs(t, tc, uidOwner, script("stopped"), api.StateCancelled, idRange(400, 3)...)
	trackJobs(t, tc, uidOwner, script("queued"), api.StatePending, idRange(1000, 250)...)
	trackJobs(t, tc, nobody, script("theirs"), api.StatePending, idRange(2000, 50)...)

	p := pageAs(t, tc, uidOwner, "all=1&limit=100")
	want := map[api.JobState]int{api.StatePending: 251, api.StateCompleted: 300, api.StateCancelled: 3}
	if fmt.Sprint(p.Counts) != fmt.Sprint(want) {
		t.Errorf("counts %v, want %v", p.Counts, want)
	}
	per := map[api.JobState][]uint64{}
	for i, j := range p.Jobs {
		if i > 0 && j.ID >= p.Jobs[i-1].ID {
			t.Fatalf("job %d after job %d: not newest first", j.ID, p.Jobs[i-1].ID)
		}
		if j.UID != uidOwner {
			t.Fatalf("the owner's page shows job %d of %s", j.ID, j.User)
		}
		per[j.State] = append(per[j.State], j.ID)
	}
	if got := per[api.StatePending]; len(got) != 100 || got[0] != 1249 || got[99] != 1150 {
		t.Errorf("pending shown: %d jobs from %v, want the newest 100, 1249 down to 1150", len(got), got)
	}
	if got := per[api.StateCompleted]; len(got) != 100 || got[0] != 399 || got[99] != 300 {
		t.Errorf("completed shown: %d jobs, want 399 down to 300", len(got))
	}
	if got := per[api.StateCancelled]; len(got) != 3 {
		t.Errorf("cancelled shown: %v, want all 3", got)
	}
	if got := pageAs(t, tc, uidOwner, "all=1&limit=100&view=brief"); len(got.Jobs) != len(p.Jobs) || got.Jobs[0].Spec.Script != "" || p.Jobs[0].Spec.Script == "" {
		t.Errorf("a brief page: %d jobs (want %d), first with script %q", len(got.Jobs), len(p.Jobs), got.Jobs[0].Spec.Script)
	}

	// With room for everything, a page is the listing `corral queue` reads.
	for _, q := range []string{"", "all=1", "state=PD", "user=sys&all=1"} {
		var listed []api.Job
		if err := clientAs(userHandler(tc.srv), tc.srv.users, uidOwner).Do(context.Background(), http.MethodGet, "/v1/jobs?"+q, nil, &listed); err != nil {
			t.Fatal(err)
		}
		whole := pageAs(t, tc, uidOwner, q+"&limit=1000")
		if a, b := pageRefs(whole.Jobs), pageRefs(listed); !slices.Equal(a, b) {
			t.Errorf("?%s: the page lists %d entries, the listing %d: %v", q, len(a), len(b), a[:min(5, len(a))])
		}
		n := 0
		for _, c := range whole.Counts {
			n += c
		}
		if n != len(listed) {
			t.Errorf("?%s: counts add up to %d, the listing has %d", q, n, len(listed))
		}
	}
	folded := pageAs(t, tc, uidOwner, "state=PD&limit=1000")
	if last := folded.Jobs[len(folded.Jobs)-1]; last.ID != arr || last.ArrayJobID != arr || last.ArrayTasks != "0-9" {
		t.Errorf("the array's pending tasks: %+v, want one entry %d_[0-9]", last, arr)
	}

	if got := pageAs(t, tc, nobody, "all=1&limit=10"); fmt.Sprint(got.Counts) != fmt.Sprint(map[api.JobState]int{api.StatePending: 50}) ||
		len(got.Jobs) != 10 || got.Jobs[0].ID != 2049 || got.Jobs[0].UID != nobody {
		t.Errorf("another user's page: counts %v, %d jobs", got.Counts, len(got.Jobs))
	}
	if got := pageAs(t, tc, uidAdmin, "all=1&limit=10"); got.Counts[api.StatePending] != 301 || got.Jobs[0].ID != 2049 {
		t.Errorf("an admin's page: counts %v, want 301 pending of both users", got.Counts)
	}

	for _, bad := range []struct{ query, want string }{
		{"limit=0", "invalid limit"}, {"limit=x", "invalid limit"}, {"limit=10001", "from 1 to 10000"},
		{"limit=5&limit=6", "invalid limit"}, {"limit=5&id=1", "does not combine with id"},
	} {
		code, out := callAs(t, tc, uidOwner, http.MethodGet, "/v1/jobs?"+bad.query, nil)
		if code != http.StatusBadRequest || !strings.Contains(errorText(t, out), bad.want) {
			t.Errorf("?%s: %d %s, want 400 saying %q", bad.query, code, out, bad.want)
		}
	}
}

// The sessions page shows at most 200 rows per tab, the newest, and says
// exactly how many more there are, counting only the user's own jobs.
func TestDashboardSessionsBounded(t *testing.T) {
	tc := MustServer(t, eventsOnly, withPartitions(matrixConf), func(c *Config) { c.WebListen = "127.0.0.1:0" })
	trackJobs(t, tc, uidOwner, script("old"), api.StateCompleted, idRange(100, 300)...)
	trackJobs(t, tc, uidOwner, script("stopped"), api.StateCancelled, idRange(400, 3)...)
	trackJobs(t, tc, uidOwner, script("queued"), api.StatePending, idRange(1000, 250)...)
	trackJobs(t, tc, nobody, script("theirs"), api.StatePending, idRange(2000, 50)...)
	b := newBrowser(t, "http://"+tc.srv.web.Addr())
	signIn(t, tc, b, uidOwner)
	code, page := b.get("/")
	if code != http.StatusOK {
		t.Fatalf("the sessions page: %d", code)
	}
	for _, want := range []string{"Pending <small>(200, 50 more not shown)", "Finished <small>(200, 103 more not shown)",
		`data-job-id="1249" data-state="PENDING"`, `data-job-id="402" data-state="CANCELLED"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	for _, gone := range []uint64{1049, 100, 2049} { // beyond the first 200, or another user's
		if strings.Contains(page, `data-job-id="`+strconv.FormatUint(gone, 10)+`"`) {
			t.Errorf("the page shows job %d", gone)
		}
	}
}

// A commit that changes 1,000 jobs at once tells the dashboard once: the
// version its event stream sends moves by one.
func TestDashboardOneEventPerCommit(t *testing.T) {
	tc := MustServer(t, eventsOnly, withPartitions(matrixConf), func(c *Config) { c.WebListen = "127.0.0.1:0" })
	storeJobs(t, tc, uidOwner, script("burst"), 1000)
	base := "http://" + tc.srv.web.Addr()
	b := newBrowser(t, base)
	signIn(t, tc, b, uidOwner)
	resp, err := b.hc.Get(base + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	versions := make(chan uint64)
	go func() {
		defer close(versions)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				n, _ := strconv.ParseUint(v, 10, 64)
				versions <- n
			}
		}
	}()
	next := func(what string) uint64 {
		select {
		case v, ok := <-versions:
			if !ok {
				t.Fatalf("the stream ended before %s", what)
			}
			return v
		case <-time.After(30 * time.Second): // a bound on the wait, not a timing claim
			t.Fatalf("no event within 30 s of %s", what)
		}
		return 0
	}
	tc.submitFor(nobody, script("one"))
	before := next("a submit")
	res, err := clientAs(userHandler(tc.srv), tc.srv.users, uidOwner).Cancel(context.Background(), api.CancelRequest{Name: "burst"})
	if err != nil {
		t.Fatalf("cancelling the burst: %v", err)
	}
	if len(res.Cancelled) != 1000 {
		t.Fatalf("cancelled %d of the burst's 1,000 jobs", len(res.Cancelled))
	}
	if after := next("cancelling 1,000 jobs"); after != before+1 {
		t.Errorf("one commit of 1,000 jobs moved the version from %d to %d, want one step", before, after)
	}
}
