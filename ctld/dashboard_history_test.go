package ctld

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// rowIDs are the data-job-id values of a page's rows, in order.
func rowIDs(page string) []string {
	var ids []string
	for _, m := range regexp.MustCompile(`<tr data-job-id="(\d+)"`).FindAllStringSubmatch(page, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// The finished list shows a user's ended jobs newest first with state,
// exit code, elapsed, CPU time and peak memory, filters them as `corral
// acct` does, reads them 50 jobs a page with a link to the older ones,
// and shows another user's history only to operators and admins.
func TestDashboardFinished(t *testing.T) {
	tc := MustServer(t, withPartitions(matrixConf), func(c *Config) { c.WebListen = "127.0.0.1:0" })
	base := "http://" + tc.srv.web.Addr()
	node := newFakeNode(tc, "n1", 64, 64<<30)
	node.register()
	var ids []uint64
	for i := range 53 {
		name := "train"
		st, exit := api.StateCompleted, 0
		if i%10 == 3 {
			name, st, exit = "flaky", api.StateFailed, 3
		}
		id := tc.submitFor(uidOwner, script(name))
		node.waitLaunch()
		if err := node.end(id, st, exit); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	theirs := tc.submitFor(nobody, script("theirs"))
	node.waitLaunch()
	node.end(theirs, api.StateCompleted, 0)
	waitFor(t, "every job ended", func() bool { return tc.job(theirs).State == api.StateCompleted })

	owner := newBrowser(t, base)
	signIn(t, tc, owner, uidOwner)
	code, page := owner.get("/history")
	got := rowIDs(page)
	if code != 200 || len(got) != 50 || got[0] != fmt.Sprint(ids[52]) || got[49] != fmt.Sprint(ids[3]) {
		t.Fatalf("the first page (%d) lists %v, want the newest 50 of the owner's jobs, newest first", code, got)
	}
	if !strings.Contains(page, `data-state="FAILED"`) || !strings.Contains(page, "<td>3</td>") || !strings.Contains(page, "4.0 KiB") ||
		!strings.Contains(page, "<td>2ms</td>") {
		t.Errorf("the rows lack the state, exit code, peak memory or CPU time:\n%s", page[strings.Index(page, "<tbody>"):][:1500])
	}
	if _, all := owner.get("/history?user=&since=2001-01-01"); strings.Contains(all, fmt.Sprintf(`data-job-id="%d"`, theirs)) || len(rowIDs(all)) != 50 {
		t.Errorf("the owner's history lists another user's job, or not a full page")
	}
	older := regexp.MustCompile(`class="older" href="([^"]+)"`).FindStringSubmatch(page)
	if older == nil || !strings.Contains(older[1], fmt.Sprintf("before=%d", ids[3])) {
		t.Fatalf("the first page has no link to the older jobs")
	}
	if _, page := owner.get(strings.ReplaceAll(older[1], "&amp;", "&")); fmt.Sprint(rowIDs(page)) != fmt.Sprint([]string{fmt.Sprint(ids[2]), fmt.Sprint(ids[1]), fmt.Sprint(ids[0])}) ||
		strings.Contains(page, `class="older"`) {
		t.Errorf("the second page lists %v, want the three oldest and no older link", rowIDs(page))
	}

	_, page = owner.get("/history?state=FAILED&name=flaky")
	if got := rowIDs(page); len(got) != 5 || got[0] != fmt.Sprint(ids[43]) {
		t.Errorf("state=FAILED name=flaky lists %v, want the 5 failed jobs", got)
	}
	if _, page := owner.get("/history?name=train&state=FAILED"); len(rowIDs(page)) != 0 {
		t.Errorf("name=train state=FAILED lists %v", rowIDs(page))
	}
	today := time.Now().Format("2006-01-02")
	if _, page := owner.get("/history?until=2001-01-01"); len(rowIDs(page)) != 0 {
		t.Errorf("until 2001 lists %v", rowIDs(page))
	}
	if _, page := owner.get("/history?since=" + today + "&until=" + today); len(rowIDs(page)) != 50 {
		t.Errorf("since and until today list %d jobs, want a page of 50", len(rowIDs(page)))
	}
	if code, page := owner.get("/history?since=yesterday"); code != http.StatusBadRequest || !strings.Contains(page, "since: give a date as YYYY-MM-DD") {
		t.Errorf("a bad date: %d", code)
	}

	other := newBrowser(t, base)
	signIn(t, tc, other, nobody)
	if code, page := other.get("/history?user=sys"); code != http.StatusForbidden || len(rowIDs(page)) != 0 {
		t.Errorf("another user asking for sys's history: %d with %d rows, want 403 and none", code, len(rowIDs(page)))
	}
	admin := newBrowser(t, base)
	signIn(t, tc, admin, uidAdmin)
	if _, page := admin.get("/history?user=sys&state=FAILED"); len(rowIDs(page)) != 5 {
		t.Errorf("an admin asking for sys's failed jobs sees %d rows, want 5", len(rowIDs(page)))
	}
}
