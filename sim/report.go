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

// Rows are every metric, in the order side-by-side tables list them:
// the whole replay's, then each width and length class's Summary.
var Rows = func() []Row {
	whole := summaryRows("", "", func(m Metrics) Summary { return m.Summary })
	rows := append([]Row{whole[0], // jobs
		{"utilization", "utilization", func(m Metrics) float64 { return m.Utilization }, "%.4f"},
		{"makespan_s", "makespan (s)", func(m Metrics) float64 { return float64(m.Makespan) }, "%.0f"},
	}, whole[1:]...)
	rows = append(rows, Row{"unfair_starts", "unfair starts", func(m Metrics) float64 { return m.UnfairStarts }, "%.4f"})
	return append(rows, classRows()...)
}()

// summaryField is one figure of a Summary.
type summaryField struct {
	key, label, format string
	value              func(Summary) float64
}

var summaryFields = []summaryField{
	{"jobs", "jobs", "%.0f", func(s Summary) float64 { return float64(s.Jobs) }},
	{"mean_wait_s", "wait mean (s)", "%.0f", func(s Summary) float64 { return s.MeanWait }},
	{"median_wait_s", "wait median (s)", "%.0f", func(s Summary) float64 { return s.MedianWait }},
	{"p95_wait_s", "wait p95 (s)", "%.0f", func(s Summary) float64 { return s.P95Wait }},
	{"p99_wait_s", "wait p99 (s)", "%.0f", func(s Summary) float64 { return s.P99Wait }},
	{"max_wait_s", "wait max (s)", "%.0f", func(s Summary) float64 { return float64(s.MaxWait) }},
	{"mean_bounded_slowdown", "bsld mean", "%.2f", func(s Summary) float64 { return s.MeanBSLD }},
	{"median_bounded_slowdown", "bsld median", "%.2f", func(s Summary) float64 { return s.MedianBSLD }},
	{"p95_bounded_slowdown", "bsld p95", "%.2f", func(s Summary) float64 { return s.P95BSLD }},
	{"p99_bounded_slowdown", "bsld p99", "%.2f", func(s Summary) float64 { return s.P99BSLD }},
	{"max_bounded_slowdown", "bsld max", "%.2f", func(s Summary) float64 { return s.MaxBSLD }},
	{"fairness_jain", "Jain over users", "%.3f", func(s Summary) float64 { return s.Fairness }},
	{"worst_user_mean_bounded_slowdown", "worst user's mean bsld", "%.2f", func(s Summary) float64 { return s.WorstUserBSLD }},
}

// summaryRows are the rows of one Summary, keyed prefix+field and
// labelled pre+label.
func summaryRows(prefix, pre string, of func(Metrics) Summary) []Row {
	out := make([]Row, len(summaryFields))
	for i, f := range summaryFields {
		out[i] = Row{prefix + f.key, pre + f.label, func(m Metrics) float64 { return f.value(of(m)) }, f.format}
	}
	return out
}

// classRows are the rows of every width class, then every length class.
func classRows() []Row {
	var out []Row
	for _, split := range []struct {
		key, label string
		classes    []string
		of         func(Metrics) []ClassStats
	}{
		{"by_width", "width", WidthClasses, func(m Metrics) []ClassStats { return m.ByWidth }},
		{"by_length", "length", LengthClasses, func(m Metrics) []ClassStats { return m.ByLength }},
	} {
		for i, c := range split.classes {
			of := split.of
			out = append(out, summaryRows(fmt.Sprintf("%s[%s].", split.key, c), fmt.Sprintf("%s %s: ", split.label, c),
				func(m Metrics) Summary { return of(m)[i].Summary })...)
		}
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
