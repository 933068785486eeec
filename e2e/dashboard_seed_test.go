package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// The seed scenarios (../shared/seeds/000–003) played in a real browser
// against a real cluster with a mocked GPU host.

// webGPUConf gives sessions a time limit, so the backfill planner can say
// when a pending one will start.
const webGPUConf = "PartitionName=gpu Nodes=ALL Default=YES DefaultTime=1:00:00\n"

// launchJS fills the launch dialog's fields (sliders included, through
// the input events a person's drag would fire) and submits it.
func launchJS(fields map[string]string) string {
	js, _ := json.Marshal(fields)
	return fmt.Sprintf(`(() => {
		const f = document.querySelector('form[action="/launch"]');
		for (const [k, v] of Object.entries(%s)) {
			const e = f.elements[k];
			if (!e) throw new Error("the launch dialog has no field " + k);
			e.value = v;
			if (e.value !== v) throw new Error("field " + k + " refused " + v + " (kept " + e.value + ")");
			e.dispatchEvent(new Event("input", {bubbles: true}));
		}
		return true;
	})()`, js)
}

// launch opens the dialog, fills it, presses Launch and waits for the
// sessions page.
func (b *Browser) launch(fields map[string]string) {
	b.t.Helper()
	if code := b.Open("/launch"); code != 200 {
		b.t.Fatalf("the launch dialog: %d\n%s", code, b.pageText())
	}
	if !Eval[bool](b, launchJS(fields)) {
		b.t.Fatal("filling the launch dialog failed")
	}
	if code := b.Press("pressing Launch", `form[action="/launch"] button[type="submit"]`); code != 200 {
		b.t.Fatalf("Launch answered %d:\n%s", code, b.pageText())
	}
	if p := Eval[string](b, `location.pathname`); p != "/" {
		b.t.Fatalf("after Launch the browser is at %s, not the sessions page:\n%s", p, b.pageText())
	}
}

// launchOne launches one session from the dialog on an empty sessions
// page and returns its job id.
func (b *Browser) launchOne(fields map[string]string) uint64 {
	b.t.Helper()
	fields["sessions"] = "1"
	b.launch(fields)
	rows := b.Rows()
	if len(rows) != 1 {
		b.t.Fatalf("after launching one session the page lists %v", rows)
	}
	var id uint64
	for k := range rows {
		id, _ = strconv.ParseUint(k, 10, 64)
	}
	return id
}

// cellJS is the text of a job's row under the column headed col (found
// by its header, so a new column moves nothing).
func cellJS(id uint64, col string) string {
	return fmt.Sprintf(`(() => {
		const r = document.querySelector('%s');
		if (!r) return "";
		const i = [...r.closest("table").tHead.rows[0].cells].findIndex(c => c.innerText.trim() === %q);
		return i < 0 ? "" : r.cells[i].innerText;
	})()`, rowSel(id), col)
}

// Session row columns, by their headers in sessions.html.
const (
	colConfig  = "Configuration"
	colReason  = "Waiting for"
	colPlanned = "Planned start"
)

// Seed 000/001 in the browser: three 1-fGPU sessions launched at once with
// the Sessions slider on a host of 2 fGPU; two run, one waits with its
// reason and planned start; terminating one from the page starts the
// waiting one in a page that is never reloaded; terminating the rest puts
// the indicator back exactly where it started.
func TestDashboardSeed000ThreeSessions(t *testing.T) {
	c, base := WebCluster(t, ClusterOpts{Config: webGPUConf, Nodes: []NodeOpts{gpuNode(t, "web000", 1, "2")}})
	shots := screenshotDir(t)
	b := NewBrowser(t, base, "root")
	b.SignIn(c, 0)
	before := b.Indicator()
	if before["fgpu/group"][1] < 200 || before["fgpu/total"][1]-before["fgpu/total"][0] < 200 {
		t.Fatalf("the indicator should offer at least 2 fGPU (200 hundredths): %v", before)
	}
	b.Screenshot(shots, "sessions-empty")

	b.launch(map[string]string{"cpus": "1", "mem_mib": "256", "fgpu": "1", "sessions": "3", "name": "seed000"})
	rows := b.Rows()
	if len(rows) != 3 {
		t.Fatalf("after launching 3 sessions the page lists %v", rows)
	}
	var ids []uint64
	for id := range rows {
		n, _ := strconv.ParseUint(id, 10, 64)
		ids = append(ids, n)
	}
	b.WaitFor("two RUNNING and one PENDING", `(() => { const s = Object.values(`+rowsJS+`);
		return s.filter(x => x === "RUNNING").length === 2 && s.filter(x => x === "PENDING").length === 1; })()`)
	var running []uint64
	var pending uint64
	for id, st := range b.Rows() {
		n, _ := strconv.ParseUint(id, 10, 64)
		if st == "RUNNING" {
			running = append(running, n)
		} else {
			pending = n
		}
	}
	b.WaitFor("the pending session's reason and planned start",
		cellJS(pending, colReason)+` !== "" && `+cellJS(pending, colPlanned)+` !== ""`)
	if reason := Eval[string](b, cellJS(pending, colReason)); !strings.Contains(reason, "resources") {
		t.Errorf("the pending session waits for %q, want the resources in use", reason)
	}
	if j := c.Job(pending); j.State != api.StatePending || j.Reason != api.ReasonResources {
		t.Errorf("job %d: %s (%s), want PENDING (Resources)", pending, j.State, j.Reason)
	}
	for _, id := range ids {
		if cfg := Eval[string](b, cellJS(id, colConfig)); !strings.Contains(cfg, ", 1 fGPU") {
			t.Errorf("session %d's configuration %q lacks 1 fGPU", id, cfg)
		}
	}
	// Two running sessions moved every bar by exactly their requests.
	want := map[string]float64{"cpu/group": 2, "cpu/total": 2, "mem/group": 2 * 256 << 20, "mem/total": 2 * 256 << 20, "fgpu/group": 200, "fgpu/total": 200}
	b.WaitFor("the indicator to count the two running sessions", indicatorIs(before, want))
	b.Screenshot(shots, "sessions")

	// A second tab of the same user, loaded while the third session
	// waits and never reloaded: it must see the start live.
	w := b.NewTab("root (second tab)")
	if code := w.Open("/"); code != 200 {
		t.Fatalf("second tab: %d", code)
	}
	if st := w.Rows()[idText(pending)]; st != "PENDING" {
		t.Fatalf("second tab shows session %d as %q, want PENDING", pending, st)
	}
	Eval[bool](w, `window.notReloaded = true`)

	if code := b.Press("terminating a running session with its red power button", rowSel(running[0])+` button.terminate`); code != 200 {
		t.Fatalf("terminate answered %d:\n%s", code, b.pageText())
	}
	w.WaitFor("the pending session to turn RUNNING live", fmt.Sprintf(`(%s)[%q] === "RUNNING"`, rowsJS, idText(pending)))
	w.WaitFor("the terminated session to show CANCELLED live", fmt.Sprintf(`(%s)[%q] === "CANCELLED"`, rowsJS, idText(running[0])))
	if !Eval[bool](w, `window.notReloaded === true`) {
		t.Fatal("the second tab was reloaded: the start was not a live update")
	}
	w.WaitFor("the indicator to still count two sessions", indicatorIs(before, want))

	// Before each press this page must show the session terminated
	// before it as CANCELLED: the live update that moves that session to
	// the finished list shifts the rows under the next click, which then
	// lands beside its button (seen under load: no response in 30 s).
	done := running[0]
	for _, id := range []uint64{running[1], pending} {
		b.WaitFor(fmt.Sprintf("session %d to show CANCELLED", done), fmt.Sprintf(`(%s)[%q] === "CANCELLED"`, rowsJS, idText(done)))
		done = id
		b.WaitFor(fmt.Sprintf("session %d's power button", id), fmt.Sprintf(`document.querySelector('%s button.terminate') !== null`, rowSel(id)))
		if code := b.Press(fmt.Sprintf("terminating session %d", id), rowSel(id)+` button.terminate`); code != 200 {
			t.Fatalf("terminate answered %d:\n%s", code, b.pageText())
		}
	}
	for _, id := range ids {
		c.WaitState(id, api.StateCancelled, browserWait)
	}
	w.WaitFor("every session CANCELLED", `Object.values(`+rowsJS+`).every(s => s === "CANCELLED")`)
	w.WaitFor("the indicator back where it started", indicatorIs(before, nil))
	b.Open("/")
	if after := b.Indicator(); !sameIndicator(after, before) {
		t.Errorf("the indicator after every session ended: %v, before: %v", after, before)
	}
	w.Screenshot(shots, "sessions-finished")
}

// indicatorIs is a JavaScript predicate: the indicator's allocations are
// before's plus delta (per "resource/scope"), its limits unchanged.
func indicatorIs(before map[string][2]float64, delta map[string]float64) string {
	want := map[string][2]float64{}
	for k, v := range before {
		want[k] = [2]float64{v[0] + delta[k], v[1]}
	}
	js, _ := json.Marshal(want)
	return fmt.Sprintf(`JSON.stringify(Object.entries(%s).sort()) === JSON.stringify(Object.entries(%s).sort())`, indicatorJS, js)
}

func sameIndicator(a, b map[string][2]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Seed 003: a 0.5-fGPU session shows 0.5 fGPU in its configuration column.
func TestDashboardSeed003HalfGPU(t *testing.T) {
	c, base := WebCluster(t, ClusterOpts{Config: webGPUConf, Nodes: []NodeOpts{gpuNode(t, "web003", 1, "1")}})
	b := NewBrowser(t, base, "root")
	b.SignIn(c, 0)
	id := b.launchOne(map[string]string{"cpus": "1", "mem_mib": "256", "fgpu": "0.5", "name": "seed003"})
	b.WaitFor("the session RUNNING", fmt.Sprintf(`(%s)[%q] === "RUNNING"`, rowsJS, idText(id)))
	if cfg := Eval[string](b, cellJS(id, colConfig)); !strings.Contains(cfg, ", 0.5 fGPU") {
		t.Errorf("the 0.5-fGPU session's configuration column says %q", cfg)
	}
	if j := c.Job(id); j.Spec.FGPUHundredths != 50 {
		t.Errorf("job %d asks for %d hundredths of a GPU, want 50", id, j.Spec.FGPUHundredths)
	}
	b.Screenshot(screenshotDir(t), "session-half-gpu")
	if _, err := c.Client.Cancel(context.Background(), api.CancelRequest{IDs: []uint64{id}}); err != nil {
		t.Fatal(err)
	}
	c.WaitState(id, api.StateCancelled, browserWait)
}
