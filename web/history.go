package web

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
)

// The finished list (/history): the accounting history as `corral acct`
// reads it, filtered by a GET form (state, name, since and until dates,
// user for operators and administrators) and read a page at a time, the
// newest jobs first (GET /v1/acct?limit=&before=): a history of a
// million jobs costs what one page shows.

// historyJobs is the jobs one page lists.
const historyJobs = 50

// finishedStates are the states the form offers.
var finishedStates = []api.JobState{api.StateCompleted, api.StateFailed, api.StateCancelled, api.StateTimeout,
	api.StateOutOfMemory, api.StateNodeFail, api.StateRequeued}

// historyView is what the finished list shows.
type historyView struct {
	Filter  historyFilter
	States  []api.JobState
	Rows    []historyRow
	Older   template.URL // the next page; "" on the last page
	Problem string
}

// historyFilter is the form, as sent.
type historyFilter struct {
	State, Name, Since, Until, User string
	Before                          uint64
}

type historyRow struct {
	JobID                                                         uint64
	ID, Name, User, State, Exit, Elapsed, CPUTime, PeakMem, Ended string
}

// historyPage serves the finished list.
func (d *Dashboard) historyPage(w http.ResponseWriter, r *http.Request, sess *session, _ string) {
	q := r.URL.Query()
	v := historyView{States: finishedStates, Filter: historyFilter{State: q.Get("state"), Name: strings.TrimSpace(q.Get("name")),
		Since: q.Get("since"), Until: q.Get("until"), User: strings.TrimSpace(q.Get("user"))}}
	code := http.StatusOK
	f, err := v.Filter.acct(q.Get("before"))
	if err == nil {
		var recs []api.AcctRecord
		recs, err = d.cfg.Controller.As(sess.uid).Acct(r.Context(), f)
		if err == nil {
			v.Rows, v.Older = historyRows(recs, v.Filter)
		}
	}
	if err != nil {
		v.Problem, code = refusal(err), http.StatusBadRequest
		if se, ok := err.(*api.StatusError); ok {
			code = se.Code // another user's history: the controller's 403
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	if err := pages.ExecuteTemplate(w, "history.html", v); err != nil {
		d.cfg.Logger.Printf("dashboard: %v", err)
	}
}

// acct is the form as a page's accounting filter.
func (h *historyFilter) acct(before string) (api.AcctFilter, error) {
	f := api.AcctFilter{Limit: historyJobs}
	if h.State != "" {
		st, err := api.ParseJobState(h.State)
		if strings.EqualFold(h.State, string(api.StateRequeued)) {
			st, err = api.StateRequeued, nil
		}
		if err != nil {
			return f, fmt.Errorf("state: %v", err)
		}
		f.States = []api.JobState{st}
	}
	if h.Name != "" {
		f.Names = []string{h.Name}
	}
	if h.User != "" {
		f.Users = []string{h.User}
	}
	var err error
	if f.Start, err = day(h.Since, "since", 0); err != nil {
		return f, err
	}
	if f.End, err = day(h.Until, "until", 24*time.Hour-time.Second); err != nil {
		return f, err
	}
	if before != "" {
		if f.Before, err = strconv.ParseUint(before, 10, 64); err != nil || f.Before == 0 {
			return f, fmt.Errorf("before: give a job number")
		}
		h.Before = f.Before
	}
	return f, nil
}

// day reads a date of the form (YYYY-MM-DD, the controller's time zone)
// plus within; "" is no bound.
func day(s, field string, within time.Duration) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.ParseInLocation("2006-01-02", s, time.Local)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: give a date as YYYY-MM-DD, not %q", field, s)
	}
	return t.Add(within), nil
}

// historyRows are the records newest first, and the query of the page
// before the oldest (a full page may have more behind it).
func historyRows(recs []api.AcctRecord, f historyFilter) ([]historyRow, template.URL) {
	rows := make([]historyRow, 0, len(recs))
	jobs := map[uint64]bool{}
	lowest := uint64(0)
	for i := len(recs) - 1; i >= 0; i-- {
		rec := &recs[i]
		jobs[rec.JobID] = true
		if lowest == 0 || rec.JobID < lowest {
			lowest = rec.JobID
		}
		row := historyRow{JobID: rec.JobID, ID: fmt.Sprint(rec.JobID), Name: rec.Name, User: rec.User, State: string(rec.State),
			Exit:    fmt.Sprint(rec.ExitCode),
			Elapsed: (time.Duration(rec.ElapsedS) * time.Second).String(),
			CPUTime: (time.Duration(rec.TotalCPUUsec) * time.Microsecond).Round(time.Millisecond).String(),
			Ended:   rec.EndTime.Local().Format("2006-01-02 15:04:05")}
		switch {
		case rec.ArrayTasks != "":
			row.ID = fmt.Sprintf("%d_[%s]", rec.ArrayJobID, rec.ArrayTasks)
		case rec.ArrayTaskID != nil:
			row.ID = fmt.Sprintf("%d_%d", rec.ArrayJobID, *rec.ArrayTaskID)
		}
		if rec.Run > 0 {
			row.ID += fmt.Sprintf(" (run %d)", rec.Run+1)
		}
		if rec.Signal != 0 {
			row.Exit += fmt.Sprintf(" (signal %d)", rec.Signal)
		}
		if rec.MaxRSSBytes > 0 {
			row.PeakMem = bytesText(rec.MaxRSSBytes)
		}
		rows = append(rows, row)
	}
	if len(jobs) < historyJobs {
		return rows, ""
	}
	q := url.Values{"before": {strconv.FormatUint(lowest, 10)}}
	for k, v := range map[string]string{"state": f.State, "name": f.Name, "since": f.Since, "until": f.Until, "user": f.User} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return rows, template.URL("/history?" + q.Encode()) // built from url.Values: nothing to escape
}

// bytesText is a size for people: KiB, MiB or GiB with one decimal.
func bytesText(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
}
