package sim

import (
	"math"
	"sort"
)

// Tau is the bounded-slowdown threshold: runs shorter than this count as
// this long, so tiny jobs do not dominate the mean.
const Tau = 10

// Metrics summarise a replay.
type Metrics struct {
	Jobs        int     `json:"jobs"`
	Makespan    int64   `json:"makespan_s"`  // first submit to last end
	Utilization float64 `json:"utilization"` // processor-seconds used / available over the makespan
	MeanWait    float64 `json:"mean_wait_s"`
	MedianWait  float64 `json:"median_wait_s"`
	P95Wait     float64 `json:"p95_wait_s"`
	MaxWait     int64   `json:"max_wait_s"`
	// MeanBSLD is the mean of max(1, (wait+run) / max(Tau, run)).
	MeanBSLD float64 `json:"mean_bounded_slowdown"`
	// Fairness is Jain's index over users' mean bounded slowdown:
	// (sum x)^2 / (n * sum x^2); 1 when every user fares the same.
	Fairness float64 `json:"fairness_jain"`
	Users    int     `json:"users"`
}

// BoundedSlowdown is max(1, (wait+run) / max(Tau, run)).
func BoundedSlowdown(wait, run int64) float64 {
	return math.Max(1, float64(wait+run)/float64(max(Tau, run)))
}

// Compute derives the metrics from finished jobs on a machine of procs.
func Compute(recs []Record, procs int) Metrics {
	m := Metrics{Jobs: len(recs)}
	if len(recs) == 0 {
		return m
	}
	first, last := recs[0].Submit, recs[0].End
	var work float64
	waits := make([]int64, len(recs))
	var sumWait, sumBSLD float64
	perUser := map[int64][2]float64{} // sum of bsld, count
	for i, r := range recs {
		first, last = min(first, r.Submit), max(last, r.End)
		work += float64(r.Run()) * float64(r.Procs)
		waits[i] = r.Wait()
		sumWait += float64(r.Wait())
		b := BoundedSlowdown(r.Wait(), r.Run())
		sumBSLD += b
		u := perUser[r.User]
		perUser[r.User] = [2]float64{u[0] + b, u[1] + 1}
	}
	m.Makespan = last - first
	if m.Makespan > 0 {
		m.Utilization = work / (float64(procs) * float64(m.Makespan))
	}
	n := float64(len(recs))
	m.MeanWait, m.MeanBSLD = sumWait/n, sumBSLD/n
	sort.Slice(waits, func(a, b int) bool { return waits[a] < waits[b] })
	m.MedianWait = percentile(waits, 0.5)
	m.P95Wait = percentile(waits, 0.95)
	m.MaxWait = waits[len(waits)-1]
	var s, s2 float64
	for _, u := range perUser {
		x := u[0] / u[1]
		s += x
		s2 += x * x
	}
	m.Users = len(perUser)
	m.Fairness = s * s / (float64(len(perUser)) * s2)
	return m
}

// percentile interpolates linearly between the closest ranks.
func percentile(sorted []int64, p float64) float64 {
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
