package sim

import (
	"math"
	"slices"
	"sort"
)

// Tau is the bounded-slowdown threshold: runs shorter than this count as
// this long, so tiny jobs do not dominate the mean.
const Tau = 10

// Metrics summarise a replay. The JSON names are stable: scripts and
// docs/scheduling.md's table of them depend on each.
type Metrics struct {
	Summary                 // every job; its fields are Metrics' own in JSON
	Makespan    int64       `json:"makespan_s"`  // first submit to last end
	Utilization float64     `json:"utilization"` // processor-seconds used / available over the makespan
	PerUser     []UserStats `json:"per_user"`
	// ByWidth splits the jobs by processors (1, 2-16, >16), ByLength by
	// actual run time (<1h, >=1h), each class with the whole replay's
	// figures; every class is listed, empty or not.
	ByWidth  []ClassStats `json:"by_width"`
	ByLength []ClassStats `json:"by_length"`
	// UnfairStarts is the fraction of jobs that started later than in
	// the reference replay (EASY, FCFS priority with a reservation for
	// the head job) of the same trace; UnfairReference names it.
	UnfairStarts    float64 `json:"unfair_starts"`
	UnfairReference Policy  `json:"unfair_reference,omitempty"`
}

// Summary is what a replay reports of a set of jobs: all of them
// (Metrics) or one width or length class (ClassStats).
type Summary struct {
	Jobs       int     `json:"jobs"`
	MeanWait   float64 `json:"mean_wait_s"`
	MedianWait float64 `json:"median_wait_s"`
	P95Wait    float64 `json:"p95_wait_s"`
	P99Wait    float64 `json:"p99_wait_s"`
	MaxWait    int64   `json:"max_wait_s"`
	// MeanBSLD is the mean of max(1, (wait+run) / max(Tau, run)).
	MeanBSLD   float64 `json:"mean_bounded_slowdown"`
	MedianBSLD float64 `json:"median_bounded_slowdown"`
	P95BSLD    float64 `json:"p95_bounded_slowdown"`
	P99BSLD    float64 `json:"p99_bounded_slowdown"`
	MaxBSLD    float64 `json:"max_bounded_slowdown"`
	// Fairness is Jain's index over users' mean bounded slowdown (each
	// user's jobs in the set): (sum x)^2 / (n * sum x^2); 1 when every
	// user fares the same.
	Fairness float64 `json:"fairness_jain"`
	Users    int     `json:"users"`
	// WorstUserBSLD is the highest of the users' mean bounded slowdowns.
	WorstUserBSLD float64 `json:"worst_user_mean_bounded_slowdown"`
}

// UserStats is one user's share of the result.
type UserStats struct {
	User     int64   `json:"user"`
	Jobs     int     `json:"jobs"`
	MeanBSLD float64 `json:"mean_bounded_slowdown"`
}

// ClassStats summarise the jobs of one width or length class.
type ClassStats struct {
	Class string `json:"class"`
	Summary
}

// Width and length classes, in the order Metrics lists them.
var (
	WidthClasses  = []string{"1", "2-16", ">16"}
	LengthClasses = []string{"<1h", ">=1h"}
)

func widthClass(procs int) int {
	switch {
	case procs <= 1:
		return 0
	case procs <= 16:
		return 1
	}
	return 2
}

func lengthClass(run int64) int {
	if run < 3600 {
		return 0
	}
	return 1
}

// BoundedSlowdown is max(1, (wait+run) / max(Tau, run)).
func BoundedSlowdown(wait, run int64) float64 {
	return math.Max(1, float64(wait+run)/float64(max(Tau, run)))
}

// Compute derives the metrics from finished jobs on a machine of procs.
// UnfairStarts needs a reference replay: see UnfairStarts.
func Compute(recs []Record, procs int) Metrics {
	var m Metrics
	m.ByWidth, m.ByLength = emptyClasses(WidthClasses), emptyClasses(LengthClasses)
	if len(recs) == 0 {
		return m
	}
	first, last := recs[0].Submit, recs[0].End
	var work float64
	all := make([]int, len(recs))
	widths, lengths := make([][]int, len(WidthClasses)), make([][]int, len(LengthClasses))
	for i, r := range recs {
		first, last = min(first, r.Submit), max(last, r.End)
		work += float64(r.Run()) * float64(r.Procs)
		all[i] = i
		w, l := widthClass(r.Procs), lengthClass(r.Run())
		widths[w], lengths[l] = append(widths[w], i), append(lengths[l], i)
	}
	m.Makespan = last - first
	if m.Makespan > 0 {
		m.Utilization = work / (float64(procs) * float64(m.Makespan))
	}
	m.Summary, m.PerUser = summarize(recs, all)
	for c, idx := range widths {
		m.ByWidth[c].Summary, _ = summarize(recs, idx)
	}
	for c, idx := range lengths {
		m.ByLength[c].Summary, _ = summarize(recs, idx)
	}
	return m
}

func emptyClasses(names []string) []ClassStats {
	out := make([]ClassStats, len(names))
	for i, n := range names {
		out[i].Class = n
	}
	return out
}

// summarize computes the Summary of the records at idx, and their
// users' figures in user order.
func summarize(recs []Record, idx []int) (Summary, []UserStats) {
	c := Summary{Jobs: len(idx)}
	if len(idx) == 0 {
		return c, nil
	}
	waits := make([]int64, len(idx))
	bslds := make([]float64, len(idx))
	var sumWait, sumBSLD float64
	perUser := map[int64]*UserStats{}
	for k, i := range idx {
		r := recs[i]
		b := BoundedSlowdown(r.Wait(), r.Run())
		waits[k], bslds[k] = r.Wait(), b
		sumWait += float64(r.Wait())
		sumBSLD += b
		u := perUser[r.User]
		if u == nil {
			u = &UserStats{User: r.User}
			perUser[r.User] = u
		}
		u.Jobs++
		u.MeanBSLD += b // a sum until divided below
	}
	n := float64(len(idx))
	c.MeanWait, c.MeanBSLD = sumWait/n, sumBSLD/n
	slices.Sort(waits)
	slices.Sort(bslds)
	c.MedianWait, c.P95Wait, c.P99Wait = percentile(waits, 0.5), percentile(waits, 0.95), percentile(waits, 0.99)
	c.MaxWait = waits[len(waits)-1]
	c.MedianBSLD, c.P95BSLD, c.P99BSLD = percentile(bslds, 0.5), percentile(bslds, 0.95), percentile(bslds, 0.99)
	c.MaxBSLD = bslds[len(bslds)-1]
	users := make([]UserStats, 0, len(perUser))
	for _, u := range perUser {
		u.MeanBSLD /= float64(u.Jobs)
		c.WorstUserBSLD = max(c.WorstUserBSLD, u.MeanBSLD)
		users = append(users, *u)
	}
	sort.Slice(users, func(a, b int) bool { return users[a].User < users[b].User })
	// Summed in user order, not map order: floating-point sums depend on
	// order, and the same replay must give the same index to the last bit.
	var s, s2 float64
	for _, u := range users {
		s += u.MeanBSLD
		s2 += u.MeanBSLD * u.MeanBSLD
	}
	c.Users = len(users)
	c.Fairness = s * s / (float64(len(users)) * s2)
	return c, users
}

// jobKey names a job across two replays of the same trace: SWF numbers
// jobs uniquely, and the submit time separates any log that does not.
type jobKey struct{ id, submit int64 }

// UnfairStarts is the fraction of recs that started later than the same
// job did in ref, a replay of the same trace under the reference policy.
// Jobs missing from ref do not count as unfair.
func UnfairStarts(recs, ref []Record) float64 {
	if len(recs) == 0 {
		return 0
	}
	starts := make(map[jobKey]int64, len(ref))
	for _, r := range ref {
		starts[jobKey{r.ID, r.Submit}] = r.Start
	}
	late := 0
	for _, r := range recs {
		if s, ok := starts[jobKey{r.ID, r.Submit}]; ok && r.Start > s {
			late++
		}
	}
	return float64(late) / float64(len(recs))
}

// percentile interpolates linearly between the closest ranks.
func percentile[T int64 | float64](sorted []T, p float64) float64 {
	if len(sorted) == 1 {
		return float64(sorted[0])
	}
	x := p * float64(len(sorted)-1)
	lo := int(math.Floor(x))
	hi := min(lo+1, len(sorted)-1)
	return float64(sorted[lo]) + (x-float64(lo))*float64(sorted[hi]-sorted[lo])
}

func sortJobs(jobs []*simJob) {
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].Submit < jobs[b].Submit })
}
