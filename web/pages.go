package web

import (
	"context"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
)

//go:embed templates
var templates embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"percent": percent,
	"mib":     func(b int64) int64 { return (b + (1 << 20) - 1) >> 20 },
	"kib":     func(b int) int { return b >> 10 },
	"fgpu":    func(h int) string { return strconv.FormatFloat(float64(h)/100, 'f', -1, 64) },
}).ParseFS(templates, "templates/*.html"))

// maxRows bounds each tab's rows on the first screen, so a queue of
// 100,000 jobs renders as fast as one of a hundred.
const maxRows = 200

// sessionsView is what the sessions page shows.
type sessionsView struct {
	User      string
	Group     string   // the resource group (partition) the indicator shows
	Groups    []string // the ones to choose from
	CSRF      string
	Indicator []bar
	Tabs      []tab
	// Version is the live updates' version the page was read at (before
	// its data): a change published before the page's script listens is
	// still told to it.
	Version uint64
}

// bar is one resource's bar of the indicator; the data-* attributes of
// its element carry Resource, Scope, Allocated and Limit.
type bar struct {
	Resource  string // cpu, mem, fgpu
	Scope     string // group: against what the user may allocate; total: against that plus what is still free to them
	Label     string
	Allocated int64
	Limit     int64 // 0: nothing to allocate
	Text      string
}

type tab struct {
	Name  string
	Rows  []row
	More  int // rows left out (maxRows)
	Empty string
}

type row struct {
	JobID                                                   uint64 // data-job-id
	ID, Name, State, Config, Node, Elapsed, Reason, Planned string
	Ref                                                     string // what terminate names
	Priority                                                string // a pending one's factors
	Exit, CPUTime, PeakMem                                  string // a finished one's
	Active                                                  bool   // may be terminated
	Apps                                                    []appLink
}

func percent(b bar) int {
	if b.Limit <= 0 {
		return 0
	}
	return int(min(100, b.Allocated*100/b.Limit))
}

// problem answers a plain page with one message.
func (d *Dashboard) problem(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	if err := pages.ExecuteTemplate(w, "problem.html", msg); err != nil {
		d.cfg.Logger.Printf("dashboard: %v", err)
	}
}

// sessionsPage is the resource indicator and the sessions, by tab.
func (d *Dashboard) sessionsPage(w http.ResponseWriter, r *http.Request, sess *session, _ string) {
	version, _ := d.live.current()
	c := d.cfg.Controller.As(sess.uid)
	page, err := c.JobPage(r.Context(), api.JobFilter{All: true}, maxRows)
	if err != nil {
		d.apiProblem(w, err)
		return
	}
	usage, err := c.UsageFor(r.Context(), "", false) // the caller's own
	if err != nil {
		d.apiProblem(w, err)
		return
	}
	parts, err := c.Partitions(r.Context())
	if err != nil {
		d.apiProblem(w, err)
		return
	}
	v := sessionsView{CSRF: sess.csrf, Tabs: sessionTabs(page, d.cfg.Now()), Version: version}
	if err := addPriorities(r.Context(), c, &v.Tabs[1]); err != nil {
		d.apiProblem(w, err)
		return
	}
	if len(usage.Users) > 0 {
		v.User = usage.Users[0].User
	}
	v.Group, v.Groups = group(parts, r.URL.Query().Get("group"))
	v.Indicator = indicator(usage, v.Group)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := pages.ExecuteTemplate(w, "sessions.html", v); err != nil {
		d.cfg.Logger.Printf("dashboard: %v", err)
	}
}

// group is the resource group the indicator shows: the one asked for if
// it exists, else the default partition; and the names to choose from.
func group(parts []api.Partition, asked string) (string, []string) {
	var names []string
	chosen := ""
	for _, p := range parts {
		names = append(names, p.Name)
		if p.Name == asked || chosen == "" && p.Default {
			chosen = p.Name
		}
	}
	if chosen == "" && len(names) > 0 {
		chosen = names[0]
	}
	return chosen, names
}

// indicator is the seeds' two bars per resource in resource group g:
// the user's allocation against what they may allocate (their policy's
// limit, else the group's total), and against that allocation plus what
// is still allocatable to them there.
func indicator(u *api.Usage, g string) []bar {
	var mine api.UserUsage
	if len(u.Users) > 0 {
		mine = u.Users[0]
	}
	var alloc, total api.UsageAmounts
	for _, p := range u.Partitions {
		if p.Partition == g {
			alloc, total = p.Allocated, p.Total
		}
	}
	type res struct {
		name, label             string
		mine, allowed, all, tot int64
		show                    func(int64) string
	}
	var out []bar
	for _, x := range []res{
		{"cpu", "CPU", int64(mine.Allocated.CPUs), int64(mine.Allowed.CPUs), int64(alloc.CPUs), int64(total.CPUs), func(n int64) string { return fmt.Sprint(n) }},
		{"mem", "Memory", mine.Allocated.MemBytes, mine.Allowed.MemBytes, alloc.MemBytes, total.MemBytes, gib},
		{"fgpu", "fGPU", int64(mine.Allocated.FGPU), int64(mine.Allowed.FGPU), int64(alloc.FGPU), int64(total.FGPU), hundredths},
	} {
		limit := x.tot
		if x.allowed > 0 {
			limit = x.allowed
		}
		free := max(0, min(limit-x.mine, x.tot-x.all)) // allocatable to this user now
		out = append(out,
			bar{Resource: x.name, Scope: "group", Label: x.label, Allocated: x.mine, Limit: limit,
				Text: x.show(x.mine) + " / " + x.show(limit)},
			bar{Resource: x.name, Scope: "total", Label: x.label, Allocated: x.mine, Limit: x.mine + free,
				Text: x.show(x.mine) + " used, " + x.show(free) + " free to you"})
	}
	return out
}

func gib(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

// memText is a session's memory as people write it: whole MiB under a
// GiB (the seed's 256 MB session is "256 MiB", not "0.2 GiB"), else GiB
// with one decimal where it has one.
func memText(b int64) string {
	if b < 1<<30 {
		return fmt.Sprintf("%d MiB", b>>20)
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(b)/(1<<30)), ".0") + " GiB"
}
func hundredths(n int64) string { return fmt.Sprintf("%.2f", float64(n)/100) }

// sessionTabs sorts a page of jobs (the newest maxRows of each state,
// newest first) into Running (suspended ones too), Pending and Finished,
// each at most maxRows, with the count of those left out.
func sessionTabs(page *api.JobPage, now time.Time) []tab {
	tabs := []tab{{Name: "Running", Empty: "No running sessions."}, {Name: "Pending", Empty: "Nothing is waiting."},
		{Name: "Finished", Empty: "No finished sessions yet."}}
	tabOf := func(s api.JobState) *tab {
		switch {
		case s == api.StatePending:
			return &tabs[1]
		case s.Terminal():
			return &tabs[2]
		}
		return &tabs[0]
	}
	for i := range page.Jobs {
		j := &page.Jobs[i]
		if t := tabOf(j.State); len(t.Rows) < maxRows {
			t.Rows = append(t.Rows, rowOf(j, now))
		}
	}
	for s, n := range page.Counts {
		tabOf(s).More += n
	}
	for i := range tabs {
		tabs[i].More -= len(tabs[i].Rows)
	}
	return tabs
}

func rowOf(j *api.Job, now time.Time) row {
	r := row{JobID: j.ID, ID: fmt.Sprint(j.ID), Ref: fmt.Sprint(j.ID), Name: j.Name, State: string(j.State), Active: !j.State.Terminal()}
	switch {
	case j.ArrayTasks != "": // pending tasks folded: the action ends the array
		r.ID, r.Ref = fmt.Sprintf("%d_[%s]", j.ArrayJobID, j.ArrayTasks), fmt.Sprint(j.ArrayJobID)
	case j.ArrayJobID != 0 && j.ArrayTaskID != nil:
		r.ID = fmt.Sprintf("%d_%d", j.ArrayJobID, *j.ArrayTaskID)
		r.Ref = r.ID
	}
	r.Config = fmt.Sprintf("%d CPU, %s", j.CPUs*max(j.NodeCount, 1), memText(j.MemBytes*int64(max(j.NodeCount, 1))))
	if f := j.FGPUHundredths; f > 0 {
		r.Config += ", " + strconv.FormatFloat(float64(f)/100, 'f', -1, 64) + " fGPU" // 0.5 fGPU, as the seeds write it
	}
	if j.GPUs > 0 {
		r.Config += fmt.Sprintf(", %d GPU", j.GPUs)
	}
	if shm := j.Spec.ShmBytes; shm > 0 {
		r.Config += ", shm " + memText(shm)
	}
	if img := j.Spec.ContainerImage; img != "" {
		r.Config += ", " + img
	}
	for _, m := range j.Spec.Mounts {
		r.Config += ", " + m.Source + ":" + m.Target
		if m.ReadOnly {
			r.Config += ":ro"
		}
	}
	r.Apps = appLinks(j) // apps.go
	if len(j.Nodes) > 0 {
		r.Node = j.Nodes[0]
		if len(j.Nodes) > 1 {
			r.Node += fmt.Sprintf(" +%d", len(j.Nodes)-1)
		}
	}
	if j.StartTime != nil {
		end := now
		if j.EndTime != nil {
			end = *j.EndTime
		}
		r.Elapsed = end.Sub(*j.StartTime).Round(time.Second).String()
	}
	if j.State.Terminal() {
		if j.ExitCode != nil {
			r.Exit = fmt.Sprint(*j.ExitCode)
			if j.Signal != 0 {
				r.Exit += fmt.Sprintf(" (signal %d)", j.Signal)
			}
		}
		r.CPUTime = (time.Duration(j.CPUTimeUsec) * time.Microsecond).Round(time.Millisecond).String()
		if j.PeakMemBytes > 0 {
			r.PeakMem = fmt.Sprintf("%.1f MiB", float64(j.PeakMemBytes)/(1<<20))
		}
	}
	if j.State == api.StatePending {
		r.Reason = reasonWords(j.Reason)
		if j.PlannedStart != nil {
			r.Planned = j.PlannedStart.Local().Format("2006-01-02 15:04")
		}
	}
	return r
}

// reasons in words, for people rather than scripts.
var reasons = map[api.Reason]string{
	api.ReasonResources:                "the resources it asks for are in use",
	api.ReasonPriority:                 "jobs of higher priority go first",
	api.ReasonDependency:               "a job it depends on",
	api.ReasonDependencyNeverSatisfied: "a dependency that can never be met",
	api.ReasonPolicyLimit:              "your resource policy's limit",
	api.ReasonPartitionTimeLimit:       "its time limit is over the group's maximum",
	api.ReasonBeginTime:                "its start time (--begin)",
	api.ReasonJobHeld:                  "held: release it to let it start",
	api.ReasonJobHeldAdmin:             "held by an administrator",
	api.ReasonNodeDown:                 "a node it needs is down",
	api.ReasonLaunchFailed:             "a failed launch; it will be tried again",
	api.ReasonJobArrayTaskLimit:        "the array's limit of tasks running at once",
}

func reasonWords(r api.Reason) string {
	if w, ok := reasons[r]; ok {
		return w
	}
	if r == "" || r == api.ReasonNone {
		return "the next scheduling cycle"
	}
	return string(r)
}

// addPriorities gives the pending rows their priority factors, from one
// request for the jobs shown.
func addPriorities(ctx context.Context, c *api.Client, pending *tab) error {
	if len(pending.Rows) == 0 {
		return nil
	}
	f := api.PrioFilter{}
	for _, r := range pending.Rows {
		f.IDs = append(f.IDs, r.JobID)
	}
	resp, err := c.Prio(ctx, f)
	if err != nil {
		return err
	}
	by := make(map[uint64]api.JobPrio, len(resp.Jobs))
	for _, p := range resp.Jobs {
		by[p.JobID] = p
	}
	for i := range pending.Rows {
		if p, ok := by[pending.Rows[i].JobID]; ok {
			pending.Rows[i].Priority = fmt.Sprintf("%d = fairshare %d + age %d + size %d", p.Priority,
				p.Fairshare.Part, p.Age.Part, p.JobSize.Part)
			if p.Nice != 0 {
				pending.Rows[i].Priority += fmt.Sprintf(" - nice %d", p.Nice)
			}
		}
	}
	return nil
}
