package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// The admin view (/admin, administrators only): every user's sessions,
// the nodes with their CPU, memory and per-GPU fGPU packing (`corral
// nodes --gpus`), usage and fairshare per account and user (`corral
// share`), the pending jobs' priorities (`corral prio`), drain and resume
// per node, and a chart of the allocation over the last hours. Every read
// and action is the API call the command makes, as the signed-in user, so
// the controller's gate decides: a user who is not an administrator is
// refused (403) by the first read, before anything is shown.

// maxPrioRows bounds the priorities listed, as the sessions' tabs are.
const maxPrioRows = maxRows

// adminView is what the admin view shows.
type adminView struct {
	CSRF     string
	Chart    chart
	Sessions []adminTab
	Nodes    []adminNode
	Shares   []shareRow
	Prio     []api.JobPrio
	PrioMore int
}

// adminTab is a sessions tab with each row's user.
type adminTab struct {
	tab
	Rows []adminRow
}

type adminRow struct {
	row
	User string
}

// adminNode is a node's line and its GPUs' lines.
type adminNode struct {
	api.Node
	CPU, Mem, FGPU string
	Drained        bool // drained or draining: it offers resume
	GPUs           []gpuLine
}

type gpuLine struct {
	Index               int
	Model, Memory, FGPU string
	Jobs                string
}

// shareRow is a line of the fairshare tree, indented by depth.
type shareRow struct {
	api.ShareRow
	Indent                                  string
	NormShares, EffUsage, RawUsage, FairTxt string
}

// adminPage serves the admin view.
func (d *Dashboard) adminPage(w http.ResponseWriter, r *http.Request, sess *session, _ string) {
	v, err := d.adminRead(r.Context(), d.cfg.Controller.As(sess.uid))
	if err != nil {
		var se *api.StatusError
		if errors.As(err, &se) && se.Code == http.StatusForbidden {
			d.problem(w, http.StatusForbidden, "The admin view is for the cluster's administrators (AdminUsers in corral.conf): "+se.Message)
			return
		}
		d.apiProblem(w, err)
		return
	}
	v.CSRF = sess.csrf
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := pages.ExecuteTemplate(w, "admin.html", v); err != nil {
		d.cfg.Logger.Printf("dashboard: %v", err)
	}
}

// adminRead makes the admin view's calls; the first is for
// administrators only, so nobody else gets further.
func (d *Dashboard) adminRead(ctx context.Context, c *api.Client) (adminView, error) {
	var v adminView
	hist, err := c.AllocationHistory(ctx)
	if err != nil {
		return v, err
	}
	v.Chart = allocChart(hist.Samples)
	page, err := c.JobPage(ctx, api.JobFilter{}, maxRows) // running and pending, everyone's, bounded
	if err != nil {
		return v, err
	}
	users := make(map[uint64]string, len(page.Jobs))
	for _, j := range page.Jobs {
		users[j.ID] = j.User
	}
	for _, t := range sessionTabs(page, d.cfg.Now())[:2] {
		at := adminTab{tab: t}
		for _, rw := range t.Rows {
			at.Rows = append(at.Rows, adminRow{row: rw, User: users[rw.JobID]})
		}
		v.Sessions = append(v.Sessions, at)
	}
	nodes, err := c.Nodes(ctx)
	if err != nil {
		return v, err
	}
	for _, n := range nodes {
		v.Nodes = append(v.Nodes, adminNodeOf(n))
	}
	share, err := c.Share(ctx, nil)
	if err != nil {
		return v, err
	}
	for _, s := range share.Rows {
		v.Shares = append(v.Shares, shareRowOf(s))
	}
	prio, err := c.Prio(ctx, api.PrioFilter{})
	if err != nil {
		return v, err
	}
	v.Prio = prio.Jobs
	if len(v.Prio) > maxPrioRows {
		v.Prio, v.PrioMore = v.Prio[:maxPrioRows], len(v.Prio)-maxPrioRows
	}
	return v, nil
}

func adminNodeOf(n api.Node) adminNode {
	a := adminNode{Node: n, CPU: fmt.Sprintf("%d / %d", n.AllocCPUs, n.CPUs),
		Mem:     bytesText(n.AllocMemBytes) + " / " + bytesText(n.MemBytes),
		Drained: n.State == api.NodeDrained || n.State == api.NodeDraining || n.DrainedSince != nil}
	if n.FGPUHundredths > 0 || len(n.GPUs) > 0 {
		a.FGPU = hundredths(int64(n.AllocFGPUHundredths)) + " / " + hundredths(int64(n.FGPUHundredths))
	}
	for _, g := range n.GPUs {
		jobs := make([]string, len(g.Jobs))
		for i, id := range g.Jobs {
			jobs[i] = strconv.FormatUint(id, 10)
		}
		a.GPUs = append(a.GPUs, gpuLine{Index: g.Index, Model: g.Name, Memory: bytesText(g.MemoryBytes),
			FGPU: hundredths(int64(g.AllocHundredths)) + " / " + hundredths(int64(n.FGPUPerGPUHundredths)),
			Jobs: strings.Join(jobs, ", ")})
	}
	return a
}

func shareRowOf(s api.ShareRow) shareRow {
	r := shareRow{ShareRow: s, Indent: strings.Repeat("  ", s.Depth), NormShares: fmt.Sprintf("%.4f", s.NormShares),
		EffUsage: fmt.Sprintf("%.4f", s.EffectvUsage), RawUsage: fmt.Sprintf("%.0f", s.RawUsage)}
	if s.FairShare != nil {
		r.FairTxt = fmt.Sprintf("%.4f", *s.FairShare)
	}
	return r
}

// nodeAction drains or resumes one node as `corral nodes drain NAME
// --reason` and `corral nodes resume NAME` do: the controller refuses
// anyone but an administrator.
func (d *Dashboard) nodeAction(resume bool) signedInHandler {
	return func(w http.ResponseWriter, r *http.Request, sess *session, _ string) {
		name := r.PathValue("name")
		if name == "" || strings.ContainsAny(name, "[],") {
			d.problem(w, http.StatusBadRequest, fmt.Sprintf("node %q: name one node (a host list is for corral nodes)", name))
			return
		}
		c := d.cfg.Controller.As(sess.uid)
		var err error
		if resume {
			_, err = c.Resume(r.Context(), api.ResumeRequest{Nodes: []string{name}})
		} else {
			reason := strings.TrimSpace(r.PostFormValue("reason"))
			if reason == "" {
				d.problem(w, http.StatusBadRequest, "Draining "+name+" needs a reason: say why, for the users whose jobs wait.")
				return
			}
			_, err = c.Drain(r.Context(), api.DrainRequest{Nodes: []string{name}, Reason: reason})
		}
		if err != nil {
			d.apiProblem(w, err)
			return
		}
		http.Redirect(w, r, "/admin", http.StatusSeeOther)
	}
}
