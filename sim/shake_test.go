package sim

import (
	"fmt"
	"math"
	"reflect"
	"testing"
)

func TestShake(t *testing.T) {
	tr := MustTrace(t, fiveJobs...)
	a, b := Shake(tr, 60, 7, 0), Shake(tr, 60, 7, 0)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed and replay gave two traces")
	}
	if reflect.DeepEqual(a.Jobs, Shake(tr, 60, 7, 1).Jobs) && reflect.DeepEqual(a.Jobs, Shake(tr, 60, 8, 0).Jobs) {
		t.Fatal("another replay and another seed gave the same trace")
	}
	moved := false
	for i, j := range a.Jobs {
		d := j.Submit - tr.Jobs[i].Submit
		if j.Submit < 0 || d > 60 || d < -60 {
			t.Fatalf("job %d moved from %d to %d", j.ID, tr.Jobs[i].Submit, j.Submit)
		}
		moved = moved || d != 0
		j.Submit = tr.Jobs[i].Submit
		if j != tr.Jobs[i] {
			t.Fatalf("shaking changed more than the submit time: %+v", j)
		}
	}
	if !moved {
		t.Fatal("no job moved")
	}
	if tr.Jobs[2].Submit != 1 {
		t.Fatal("Shake changed its input")
	}
}

func TestSpreadOf(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want Spread
	}{
		{[]float64{2, 4, 4, 4, 5, 5, 7, 9}, Spread{Mean: 5, Stddev: math.Sqrt(32.0 / 7), Min: 2, Max: 9}},
		{[]float64{3}, Spread{Mean: 3, Min: 3, Max: 3}},
		{[]float64{1, 1}, Spread{Mean: 1, Min: 1, Max: 1}},
	} {
		if got := spreadOf(tc.xs); !near(got.Mean, tc.want.Mean) || !near(got.Stddev, tc.want.Stddev) ||
			got.Min != tc.want.Min || got.Max != tc.want.Max {
			t.Errorf("spreadOf(%v) = %+v, want %+v", tc.xs, got, tc.want)
		}
	}
}

// Shaken comparisons are reproducible, and each replay's figures are those
// of Compare on that replay's shaken trace.
func TestShakeCompare(t *testing.T) {
	tr := MustTrace(t, fiveJobs...)
	policies := []Policy{PolicyEASY, PolicyConservative}
	sc := ShakeConfig{Replays: 3, Jitter: 5, Seed: 42}
	a, err := ShakeCompare(tr, Config{}, policies, sc)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ShakeCompare(tr, Config{}, policies, sc)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs with one seed differ")
	}
	var waits []float64
	for i := range sc.Replays {
		res, err := Compare(Shake(tr, sc.Jitter, sc.Seed, i), Config{}, policies)
		if err != nil {
			t.Fatal(err)
		}
		waits = append(waits, res[1].Metrics.MeanWait)
	}
	if got, want := a[1].Metrics["mean_wait_s"], spreadOf(waits); got != want || a[1].Policy != PolicyConservative {
		t.Fatalf("conservative mean wait %+v, want %+v", got, want)
	}
	if len(a[0].Metrics) != len(Headline) || a[0].Replays != 3 {
		t.Fatalf("%+v", a[0])
	}
}

func TestParsePoliciesAndCompare(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"easy,conservative,slurm,default", "[easy conservative slurm default]"},
		{" EASY , fcfs", "[easy fcfs]"},
		{"easy,,default", `empty policy name in "easy,,default"`},
		{"easy,lifo", `unknown policy "lifo" (valid: fcfs, easy, conservative, slurm, default)`},
		{"easy,Easy", `policy easy named twice in "easy,Easy"`},
	} {
		ps, err := ParsePolicies(tc.in)
		got := fmt.Sprint(ps)
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%q: %s, want %s", tc.in, got, tc.want)
		}
	}
	tr := MustTrace(t, fiveJobs...)
	// With the reference policy among them and without it (its replay
	// is then made on the side).
	for _, ps := range [][]Policy{{PolicyConservative, PolicySlurm, PolicyEASY, PolicyDefault, PolicyFCFS},
		{PolicyFCFS, PolicyDefault}} {
		res, err := Compare(tr, Config{}, ps)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != len(ps) {
			t.Fatalf("%d results for %d policies", len(res), len(ps))
		}
		for i, p := range ps {
			one := MustRun(t, tr, Config{Policy: p})
			if res[i].Policy != p || !reflect.DeepEqual(res[i].Metrics, one.Metrics) {
				t.Errorf("%s: compared %+v, alone %+v", p, res[i].Metrics, one.Metrics)
			}
		}
	}
}
