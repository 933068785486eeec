package sim

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// Percentiles, the bounded-slowdown distribution, per-user figures and
// the width and length classes, on jobs whose values are worked out by
// hand.
func TestMetricsDistributionsAndClasses(t *testing.T) {
	recs := []Record{
		{ID: 1, User: 1, Procs: 1, Submit: 0, Start: 0, End: 100},      // wait 0, bsld 1
		{ID: 2, User: 1, Procs: 16, Submit: 0, Start: 100, End: 200},   // wait 100, bsld 2
		{ID: 3, User: 2, Procs: 17, Submit: 10, Start: 40, End: 45},    // wait 30, bsld 3.5
		{ID: 4, User: 3, Procs: 2, Submit: 50, Start: 3650, End: 7250}, // wait 3600, run 3600: bsld 2
		{ID: 5, User: 3, Procs: 64, Submit: 60, Start: 60, End: 3659},  // run 3599 (<1h), bsld 1
	}
	m := Compute(recs, 64)
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"median wait", m.MedianWait, 30},
		{"p95 wait", m.P95Wait, 100 + 0.8*3500},  // rank 3.8 of 0, 0, 30, 100, 3600
		{"p99 wait", m.P99Wait, 100 + 0.96*3500}, // rank 3.96
		{"max wait", float64(m.MaxWait), 3600},
		{"mean bsld", m.MeanBSLD, (1 + 2 + 3.5 + 2 + 1) / 5},
		{"median bsld", m.MedianBSLD, 2},
		{"p95 bsld", m.P95BSLD, 2 + 0.8*1.5}, // 1, 1, 2, 2, 3.5
		{"max bsld", m.MaxBSLD, 3.5},
		{"worst user", m.WorstUserBSLD, 3.5},
		{"width 1 jobs", float64(m.ByWidth[0].Jobs), 1},
		{"width 2-16 jobs", float64(m.ByWidth[1].Jobs), 2},
		{"width 2-16 mean wait", m.ByWidth[1].MeanWait, (100 + 3600) / 2.0},
		{"width 2-16 max wait", float64(m.ByWidth[1].MaxWait), 3600},
		{"width 2-16 p95 wait", m.ByWidth[1].P95Wait, 100 + 0.95*3500},
		{"width >16 jobs", float64(m.ByWidth[2].Jobs), 2},
		{"width >16 mean bsld", m.ByWidth[2].MeanBSLD, (3.5 + 1) / 2},
		{"length <1h jobs", float64(m.ByLength[0].Jobs), 4},
		{"length >=1h jobs", float64(m.ByLength[1].Jobs), 1},
		{"length >=1h mean wait", m.ByLength[1].MeanWait, 3600},
		// Each class has the whole replay's figures, over its own jobs.
		{"width 2-16 median wait", m.ByWidth[1].MedianWait, (100 + 3600) / 2.0},
		{"width 2-16 p99 wait", m.ByWidth[1].P99Wait, 100 + 0.99*3500},
		{"width >16 median bsld", m.ByWidth[2].MedianBSLD, (3.5 + 1) / 2},
		{"width >16 p95 bsld", m.ByWidth[2].P95BSLD, 1 + 0.95*2.5},
		{"width >16 p99 bsld", m.ByWidth[2].P99BSLD, 1 + 0.99*2.5},
		{"width >16 max bsld", m.ByWidth[2].MaxBSLD, 3.5},
		{"width >16 users", float64(m.ByWidth[2].Users), 2},
		// users 2 and 3 at 3.5 and 1: 4.5^2 / (2 * (3.5^2 + 1))
		{"width >16 Jain", m.ByWidth[2].Fairness, 4.5 * 4.5 / (2 * (3.5*3.5 + 1))},
		{"width >16 worst user", m.ByWidth[2].WorstUserBSLD, 3.5},
		{"length <1h worst user", m.ByLength[0].WorstUserBSLD, 3.5},
		// users 1 and 3 of the 2-16 both at 2: fair
		{"width 2-16 Jain", m.ByWidth[1].Fairness, 1},
	} {
		if !near(tc.got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	want := []UserStats{{1, 2, 1.5}, {2, 1, 3.5}, {3, 2, 1.5}}
	if len(m.PerUser) != 3 {
		t.Fatalf("per user %+v", m.PerUser)
	}
	for i, u := range m.PerUser {
		if u.User != want[i].User || u.Jobs != want[i].Jobs || !near(u.MeanBSLD, want[i].MeanBSLD) {
			t.Errorf("user %d: %+v, want %+v", i, u, want[i])
		}
	}
	if empty := Compute(nil, 4); len(empty.ByWidth) != 3 || len(empty.ByLength) != 2 || empty.ByWidth[2].Class != ">16" {
		t.Errorf("an empty replay lists no classes: %+v", empty)
	}
}

func TestUnfairStarts(t *testing.T) {
	ref := []Record{{ID: 1, Submit: 0, Start: 10}, {ID: 2, Submit: 5, Start: 20}, {ID: 3, Submit: 5, Start: 5}}
	for _, tc := range []struct {
		name string
		recs []Record
		want float64
	}{
		{"same starts", ref, 0},
		{"one later", []Record{{ID: 1, Submit: 0, Start: 11}, {ID: 2, Submit: 5, Start: 20}, {ID: 3, Submit: 5, Start: 5}}, 1.0 / 3},
		{"earlier is fair", []Record{{ID: 1, Submit: 0, Start: 0}, {ID: 2, Submit: 5, Start: 5}}, 0},
		{"all later", []Record{{ID: 1, Submit: 0, Start: 99}, {ID: 3, Submit: 5, Start: 6}}, 1},
		{"not in the reference", []Record{{ID: 9, Submit: 0, Start: 99}}, 0},
		{"same number, other job", []Record{{ID: 1, Submit: 7, Start: 99}}, 0},
		{"nothing", nil, 0},
	} {
		if got := UnfairStarts(tc.recs, ref); !near(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Run measures unfair starts against its own EASY replay: the reference
// itself has none, and conservative's fiveJobs schedule delays job 5
// (3 under EASY, 110 here) and nothing else.
func TestRunReportsUnfairStarts(t *testing.T) {
	tr := MustTrace(t, fiveJobs...)
	easy := MustRun(t, tr, Config{Policy: PolicyEASY})
	cons := MustRun(t, tr, Config{Policy: PolicyConservative})
	if easy.Metrics.UnfairStarts != 0 || !near(cons.Metrics.UnfairStarts, 1.0/5) ||
		cons.Metrics.UnfairReference != PolicyEASY {
		t.Fatalf("unfair starts: easy %v, conservative %v (reference %q); want 0 and 0.2",
			easy.Metrics.UnfairStarts, cons.Metrics.UnfairStarts, cons.Metrics.UnfairReference)
	}
	shared := MustRun(t, tr, Config{Policy: PolicyConservative, Reference: easy.Records})
	if shared.Metrics.UnfairStarts != cons.Metrics.UnfairStarts {
		t.Fatalf("a given reference gives %v, its own replay %v", shared.Metrics.UnfairStarts, cons.Metrics.UnfairStarts)
	}
}

// Jain's index is the same to the last bit every time the same records are
// measured: a floating-point sum over users in map order is not (it
// differed in the last digits between two runs of one KTH replay).
func TestFairnessIsBitForBitRepeatable(t *testing.T) {
	var recs []Record
	for u := int64(1); u <= 200; u++ {
		// Slowdowns with many significant digits, so the order of the sum shows.
		recs = append(recs, Record{ID: u, User: u, Procs: 1, Submit: 0, Start: u * 7919 % 1009, End: u*7919%1009 + 11 + u%13})
	}
	want := math.Float64bits(Compute(recs, 64).Fairness)
	for i := 0; i < 50; i++ {
		if got := math.Float64bits(Compute(recs, 64).Fairness); got != want {
			t.Fatalf("run %d: Jain's index %v, first run %v", i, math.Float64frombits(got), math.Float64frombits(want))
		}
	}
}
