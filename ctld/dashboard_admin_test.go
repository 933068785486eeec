package ctld

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// The admin view is refused (403) to a user who is not an administrator,
// with nothing of it shown. An administrator sees every user's sessions
// with their users, the nodes with the hooks data-node and data-action,
// each GPU's fGPU packing, the fairshare tree, the pending priorities and
// the allocation chart; draining from the page needs the CSRF token and a
// reason and drains the node through the API, and resume undoes it.
func TestDashboardAdmin(t *testing.T) {
	tc := MustServer(t, withPartitions(matrixConf), func(c *Config) {
		c.WebListen = "127.0.0.1:0"
		c.AllocSampleEvery = 5 * time.Millisecond
	})
	base := "http://" + tc.srv.web.Addr()
	node := MustGPUNode(tc, "n1", a100s(1, false), 200)
	running := tc.submitFor(uidOwner, fgpuJob("half", 50))
	node.waitLaunch()
	tc.waitJob(running, "running", inState(api.StateRunning))
	big := script("toobig")
	big.CPUs = 8
	pending := tc.submitFor(nobody, big)

	user := newBrowser(t, base)
	signIn(t, tc, user, uidOwner)
	_, userPage := user.get("/")
	if code, page := user.get("/admin"); code != http.StatusForbidden || strings.Contains(page, "data-node") || !strings.Contains(page, "administrators") {
		t.Fatalf("a user's admin view: %d, want 403 and nothing of it:\n%.500s", code, page)
	}
	drain := "/admin/nodes/n1/drain"
	if code, _ := user.post(drain, url.Values{"csrf": {csrfRE(userPage)}, "reason": {"mine now"}}, base); code != http.StatusForbidden {
		t.Errorf("a user's drain: %d, want 403", code)
	}

	admin := newBrowser(t, base)
	signIn(t, tc, admin, uidAdmin)
	var page string
	waitFor(t, "a chart with the running job's fGPU", func() bool {
		var code int
		code, page = admin.get("/admin")
		if code != 200 {
			t.Fatalf("the admin's view: %d\n%s", code, page)
		}
		return strings.Contains(page, "fGPU: 0.50 of 2.00")
	})
	for _, want := range []string{
		`<tr data-node="n1" data-state="MIXED">`, `data-action="drain"`, `<svg id="alloc-chart"`, `data-resource="fgpu"`,
		fmt.Sprintf(`data-job-id="%d" data-state="RUNNING" data-user="sys"`, running),
		fmt.Sprintf(`data-job-id="%d" data-state="PENDING" data-user="nobody"`, pending),
		`data-gpu-of="n1" data-gpu="0"`, "NVIDIA A100-SXM4-40GB", "<td>0.50 / 2.00</td>", fmt.Sprintf("jobs %d", running),
		`data-user="sys" data-account=`, "Pending priorities",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the admin view lacks %s", want)
		}
	}
	if strings.Count(page, fmt.Sprintf(`data-job-id="%d"`, pending)) != 1 || !strings.Contains(page, fmt.Sprintf(`<tr data-prio-job="%d"><td>%d</td><td>nobody</td>`, pending, pending)) {
		t.Errorf("the pending job is not once in the sessions and once in the priorities")
	}

	token := csrfRE(page)
	for _, bad := range []struct {
		form url.Values
		want int
	}{{url.Values{"reason": {"disk"}}, http.StatusForbidden}, {url.Values{"csrf": {"forged"}, "reason": {"disk"}}, http.StatusForbidden},
		{url.Values{"csrf": {token}}, http.StatusBadRequest}, {url.Values{"csrf": {token}, "reason": {"  "}}, http.StatusBadRequest}} {
		if code, _ := admin.post(drain, bad.form, base); code != bad.want {
			t.Errorf("drain with %v: %d, want %d", bad.form, code, bad.want)
		}
	}
	if st := tc.node("n1").State; st != api.NodeMixed {
		t.Fatalf("refused drains changed the node: %s", st)
	}
	if code, _ := admin.post("/admin/nodes/n%5B1-4%5D/drain", url.Values{"csrf": {token}, "reason": {"x"}}, base); code != http.StatusBadRequest {
		t.Errorf("a drain of a host list from the page: %d, want 400", code)
	}
	if code, _ := admin.post(drain, url.Values{"csrf": {token}, "reason": {"bad fan"}}, base); code != http.StatusSeeOther {
		t.Fatalf("the admin's drain: %d, want a redirect", code)
	}
	if n := tc.node("n1"); n.State != api.NodeDraining || n.Reason != "bad fan" {
		t.Fatalf("after the page's drain n1 is %s (%q), want DRAINING, bad fan", n.State, n.Reason)
	}
	if _, page := admin.get("/admin"); !strings.Contains(page, `data-action="resume"`) || !strings.Contains(page, "bad fan") {
		t.Errorf("a drained node offers no resume, or its reason is not shown")
	}
	if code, _ := admin.post("/admin/nodes/n1/resume", url.Values{"csrf": {token}}, base); code != http.StatusSeeOther {
		t.Fatalf("the admin's resume: %d", code)
	}
	if st := tc.node("n1").State; st != api.NodeMixed {
		t.Errorf("after resume n1 is %s, want MIXED", st)
	}
	if code, _ := admin.post("/admin/nodes/n9/drain", url.Values{"csrf": {token}, "reason": {"x"}}, base); code != http.StatusNotFound {
		t.Errorf("a drain of an unknown node: %d, want 404", code)
	}
}
