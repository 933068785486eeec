package sim

import "fmt"

// Row is one metric as reports show it: its Metrics JSON name, a label
// and how to read and print it.
type Row struct {
	Key    string
	Label  string
	Value  func(Metrics) float64
	Format string // for fmt, of Value
}

func (r Row) Text(m Metrics) string { return fmt.Sprintf(r.Format, r.Value(m)) }

// Rows are every metric, in the order side-by-side tables list them.
var Rows = append(append([]Row{
	{"jobs", "jobs", func(m Metrics) float64 { return float64(m.Jobs) }, "%.0f"},
	{"utilization", "utilization", func(m Metrics) float64 { return m.Utilization }, "%.4f"},
	{"makespan_s", "makespan (s)", func(m Metrics) float64 { return float64(m.Makespan) }, "%.0f"},
	{"mean_wait_s", "wait mean (s)", func(m Metrics) float64 { return m.MeanWait }, "%.0f"},
	{"median_wait_s", "wait median (s)", func(m Metrics) float64 { return m.MedianWait }, "%.0f"},
	{"p95_wait_s", "wait p95 (s)", func(m Metrics) float64 { return m.P95Wait }, "%.0f"},
	{"p99_wait_s", "wait p99 (s)", func(m Metrics) float64 { return m.P99Wait }, "%.0f"},
	{"max_wait_s", "wait max (s)", func(m Metrics) float64 { return float64(m.MaxWait) }, "%.0f"},
	{"mean_bounded_slowdown", "bsld mean", func(m Metrics) float64 { return m.MeanBSLD }, "%.2f"},
	{"median_bounded_slowdown", "bsld median", func(m Metrics) float64 { return m.MedianBSLD }, "%.2f"},
	{"p95_bounded_slowdown", "bsld p95", func(m Metrics) float64 { return m.P95BSLD }, "%.2f"},
	{"p99_bounded_slowdown", "bsld p99", func(m Metrics) float64 { return m.P99BSLD }, "%.2f"},
	{"max_bounded_slowdown", "bsld max", func(m Metrics) float64 { return m.MaxBSLD }, "%.2f"},
	{"fairness_jain", "Jain over users", func(m Metrics) float64 { return m.Fairness }, "%.3f"},
	{"worst_user_mean_bounded_slowdown", "worst user's mean bsld", func(m Metrics) float64 { return m.WorstUserBSLD }, "%.2f"},
	{"unfair_starts", "unfair starts", func(m Metrics) float64 { return m.UnfairStarts }, "%.4f"},
}, classRows("by_width", "width", WidthClasses, func(m Metrics) []ClassStats { return m.ByWidth })...),
	classRows("by_length", "length", LengthClasses, func(m Metrics) []ClassStats { return m.ByLength })...)

// classRows are the rows of one split (by width or by length).
func classRows(key, label string, classes []string, of func(Metrics) []ClassStats) []Row {
	var out []Row
	for i, c := range classes {
		get := func(m Metrics) ClassStats { return of(m)[i] }
		name := func(field string) string { return fmt.Sprintf("%s[%s].%s", key, c, field) }
		pre := fmt.Sprintf("%s %s: ", label, c)
		out = append(out,
			Row{name("jobs"), pre + "jobs", func(m Metrics) float64 { return float64(get(m).Jobs) }, "%.0f"},
			Row{name("mean_wait_s"), pre + "wait mean (s)", func(m Metrics) float64 { return get(m).MeanWait }, "%.0f"},
			Row{name("p95_wait_s"), pre + "wait p95 (s)", func(m Metrics) float64 { return get(m).P95Wait }, "%.0f"},
			Row{name("max_wait_s"), pre + "wait max (s)", func(m Metrics) float64 { return float64(get(m).MaxWait) }, "%.0f"},
			Row{name("mean_bounded_slowdown"), pre + "bsld mean", func(m Metrics) float64 { return get(m).MeanBSLD }, "%.2f"})
	}
	return out
}

// Headline are the metrics --shake reports the spread of.
var Headline = pick("mean_bounded_slowdown", "p95_bounded_slowdown", "mean_wait_s", "p95_wait_s",
	"max_wait_s", "utilization", "fairness_jain", "unfair_starts")

func pick(keys ...string) []Row {
	var out []Row
	for _, k := range keys {
		for _, r := range Rows {
			if r.Key == k {
				out = append(out, r)
			}
		}
	}
	if len(out) != len(keys) {
		panic("sim: a headline metric has no row")
	}
	return out
}
