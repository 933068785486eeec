package priority

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// MustCalculator builds a calculator or fails the test.
func MustCalculator(t *testing.T, cfg Config) *Calculator {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// MustLedger returns a ledger with usage charged as one-hour blocks of
// billing b ending at t0, per user (account "": the user's default).
func MustLedger(d Decay, usage map[string]float64) *Ledger {
	l := NewLedger(d)
	for user, b := range usage {
		l.Charge(user, "", b, t0.Add(-time.Hour), t0)
	}
	return l
}

func TestBilling(t *testing.T) {
	w := DefaultBillingWeights()
	for _, tc := range []struct {
		a    Alloc
		want float64
	}{
		{Alloc{CPUs: 4}, 4},
		{Alloc{MemBytes: 8 << 30}, 2},
		{Alloc{GPUs: 1}, 2},
		{Alloc{GPUs: 0.25}, 0.5},
		{Alloc{CPUs: 2, MemBytes: 4 << 30, GPUs: 0.5}, 2 + 1 + 1},
	} {
		if got := w.Billing(tc.a); !near(got, tc.want) {
			t.Errorf("Billing(%+v) = %v, want %v", tc.a, got, tc.want)
		}
	}
	if got := (BillingWeights{CPU: 0.5}).Billing(Alloc{CPUs: 4, GPUs: 3}); got != 2 {
		t.Errorf("custom weights: %v", got)
	}
	if got := MustCalculator(t, Config{}).Billing(Alloc{CPUs: 1, GPUs: 1}); got != 3 {
		t.Errorf("a zero config bills with the defaults: %v", got)
	}
	if got := MustCalculator(t, Config{Billing: BillingWeights{GPU: 10}}).Billing(Alloc{CPUs: 1, GPUs: 1}); got != 10 {
		t.Errorf("GPU-only billing: %v", got)
	}
}

func TestDecayHalvesUsageEveryHalfLife(t *testing.T) {
	l := NewLedger(DefaultDecay())
	l.Charge("ann", "", 100, t0.Add(-time.Second), t0)
	u0 := l.Usage("ann", "", t0)
	for k, want := range []float64{1, 0.5, 0.25, 0.125} {
		at := t0.Add(time.Duration(k) * 7 * day)
		if got := l.Usage("ann", "", at) / u0; !near(got, want) {
			t.Fatalf("after %d half-lives usage is %v of the original, want %v", k, got, want)
		}
	}
	// The zero value is the default half-life; a negative one disables decay.
	zero := NewLedger(Decay{})
	zero.Charge("ann", "", 100, t0.Add(-time.Second), t0)
	if got := zero.Usage("ann", "", t0.Add(7*day)) / zero.Usage("ann", "", t0); !near(got, 0.5) {
		t.Fatalf("Decay{} left %v after 7 days, want half", got)
	}
	flat := NewLedger(Decay{HalfLife: -1})
	flat.Charge("ann", "", 2, t0, t0.Add(time.Hour))
	if got := flat.Usage("ann", "", t0.Add(365*day)); got != 7200 {
		t.Fatalf("undecayed usage %v, want 7200 billing-seconds", got)
	}
}

func TestChargeIsContinuousAndOrderFree(t *testing.T) {
	d := Decay{HalfLife: time.Hour}
	whole := NewLedger(d)
	whole.Charge("ann", "a", 3, t0, t0.Add(3*time.Hour))
	pieces := NewLedger(d)
	for i := 0; i < 180; i++ { // one charge per minute, as a controller cycle would
		pieces.Charge("ann", "a", 3, t0.Add(time.Duration(i)*time.Minute), t0.Add(time.Duration(i+1)*time.Minute))
	}
	late := NewLedger(d)
	late.Charge("ann", "a", 3, t0.Add(2*time.Hour), t0.Add(3*time.Hour))
	late.Charge("ann", "a", 3, t0, t0.Add(2*time.Hour)) // arrives after a later one
	at := t0.Add(5 * time.Hour)
	want := whole.Usage("ann", "a", at)
	// Closed form: 3 * h/ln2 * (1 - 2^-3) seconds, decayed 2 half-lives.
	closed := 3 * 3600 / math.Ln2 * (1 - 0.125) * 0.25
	if !near(want, closed) {
		t.Fatalf("usage %v, want %v", want, closed)
	}
	for name, l := range map[string]*Ledger{"pieces": pieces, "out of order": late} {
		if got := l.Usage("ann", "a", at); math.Abs(got-want) > 1e-6*want {
			t.Errorf("%s: usage %v, want %v", name, got, want)
		}
	}
	if got := whole.UserUsage("ann", at); !near(got, want) {
		t.Errorf("UserUsage %v, want %v", got, want)
	}
}

func TestResetPeriodClearsUsage(t *testing.T) {
	l := NewLedger(Decay{HalfLife: -1, ResetPeriod: day})
	l.Charge("ann", "", 1, t0.Add(-2*time.Hour), t0.Add(2*time.Hour)) // straddles midnight
	if got := l.Usage("ann", "", t0.Add(3*time.Hour)); got != 2*3600 {
		t.Fatalf("usage after midnight %v, want only the 2h since the reset", got)
	}
	if got := l.Usage("ann", "", t0.Add(day+time.Minute)); got != 0 {
		t.Fatalf("usage after the next reset %v, want 0", got)
	}
}

func TestLedgerJSONRoundTrip(t *testing.T) {
	l := NewLedger(DefaultDecay())
	l.Charge("ann", "phys", 4, t0, t0.Add(time.Hour))
	l.Charge("bob", "", 1, t0, t0.Add(2*time.Hour))
	data, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	back := NewLedger(DefaultDecay())
	if err := json.Unmarshal(data, back); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(3 * day) // a restart days later decays exactly the same
	for _, k := range l.Assocs() {
		if a, b := l.Usage(k.User, k.Account, at), back.Usage(k.User, k.Account, at); a != b || a == 0 {
			t.Errorf("%+v: %v before, %v after the round trip", k, a, b)
		}
	}
	for _, bad := range []string{
		`{"version":2,"usage":[]}`,
		`{"version":1,"usage":[{"user":"","value":1,"at":"2030-01-01T00:00:00Z"}]}`,
		`{"version":1,"usage":[{"user":"x","value":-1,"at":"2030-01-01T00:00:00Z"}]}`,
		`{"version":1,"usage":[{"user":"x","value":1}]}`,
		`{"version":1,"usage":[{"user":"x","value":1,"at":"2030-01-01T00:00:00Z"},{"user":"x","value":2,"at":"2030-01-01T00:00:00Z"}]}`,
		`not json`,
	} {
		if err := json.Unmarshal([]byte(bad), back); err == nil {
			t.Errorf("%s: accepted", bad)
		}
		if back.Usage("ann", "phys", at) == 0 {
			t.Fatalf("%s: a failed load changed the ledger", bad)
		}
	}
}

func TestPrune(t *testing.T) {
	l := MustLedger(Decay{HalfLife: time.Hour}, map[string]float64{"ann": 1, "bob": 1000})
	if n := l.Prune(t0.Add(10*time.Hour), 100); n != 1 || len(l.Assocs()) != 1 || l.Assocs()[0].User != "bob" {
		t.Fatalf("pruned %d, left %+v", n, l.Assocs())
	}
}

func TestClassicFormula(t *testing.T) {
	flat := MustCalculator(t, Config{Algorithm: Classic})
	l := MustLedger(Decay{HalfLife: -1}, map[string]float64{"a": 3, "b": 1})
	fs := flat.Fairshares(l, t0, nil)
	// Both users sit in the default account, which has all the usage
	// (UE 1): S = 1/2 each; U = 3/4 and 1/4; UE = U + (1-U)/2.
	for user, want := range map[string]float64{"a": math.Exp2(-0.875 / 0.5), "b": math.Exp2(-0.625 / 0.5)} {
		if got := fs.Factor(user, ""); !near(got, want) {
			t.Errorf("flat %s: %v, want %v", user, got, want)
		}
	}
	// Nested: A{a1, a2}, B{b1}; usage a1=2, b1=2.
	nested := MustCalculator(t, Config{Algorithm: Classic,
		Accounts: []Account{{Name: "A"}, {Name: "B"}},
		Users:    []User{{Name: "a1", Account: "A"}, {Name: "a2", Account: "A"}, {Name: "b1", Account: "B"}}})
	fs = nested.Fairshares(MustLedger(Decay{HalfLife: -1}, map[string]float64{"a1": 2, "b1": 2}), t0, nil)
	for user, want := range map[string]float64{
		"a1": math.Exp2(-0.5 / 0.25),  // UE = .5 + (.5-.5)/2, S = 1/4
		"a2": math.Exp2(-0.25 / 0.25), // UE = 0 + (.5-0)/2
		"b1": math.Exp2(-0.5 / 0.5),
	} {
		if got := fs.Factor(user, ""); !near(got, want) {
			t.Errorf("nested %s: %v, want %v", user, got, want)
		}
	}
}

func TestFairTreeOrdering(t *testing.T) {
	cfg := Config{
		Accounts: []Account{{Name: "A"}, {Name: "B"}},
		Users: []User{{Name: "a1", Account: "A"}, {Name: "a2", Account: "A"},
			{Name: "b1", Account: "B"}, {Name: "b2", Account: "B"}},
	}
	c := MustCalculator(t, cfg)
	fs := c.Fairshares(MustLedger(DefaultDecay(), map[string]float64{"a1": 8, "a2": 2, "b1": 2}), t0, nil)
	// B is under-served (LF 3 vs 0.6), so all of B ranks above all of A,
	// even though a2 used exactly what b1 used.
	for user, want := range map[string]float64{"b2": 1, "b1": 0.75, "a2": 0.5, "a1": 0.25} {
		if got := fs.Factor(user, ""); got != want {
			t.Errorf("%s: %v, want %v", user, got, want)
		}
	}
}

func TestFairTreeTies(t *testing.T) {
	flat := MustCalculator(t, Config{})
	fs := flat.Fairshares(MustLedger(DefaultDecay(), map[string]float64{"u3": 5}), t0,
		[]Job{{User: "u1"}, {User: "u2"}})
	for user, want := range map[string]float64{"u1": 1, "u2": 1, "u3": 1.0 / 3} {
		if got := fs.Factor(user, ""); !near(got, want) {
			t.Errorf("flat %s: %v, want %v", user, got, want)
		}
	}
	// X and Y tie (equal shares and usage): their users are merged and
	// sorted together, so Y's y1 ranks between X's two users.
	merged := MustCalculator(t, Config{
		Accounts: []Account{{Name: "X"}, {Name: "Y"}},
		Users:    []User{{Name: "x1", Account: "X"}, {Name: "x2", Account: "X"}, {Name: "y1", Account: "Y"}},
	})
	fs = merged.Fairshares(MustLedger(DefaultDecay(), map[string]float64{"x1": 1, "y1": 1}), t0, nil)
	for user, want := range map[string]float64{"x2": 1, "y1": 2.0 / 3, "x1": 1.0 / 3} {
		if got := fs.Factor(user, ""); !near(got, want) {
			t.Errorf("merged %s: %v, want %v", user, got, want)
		}
	}
}

func TestHeavyUserGetsLowerFairshare(t *testing.T) {
	for _, alg := range []Algorithm{FairTree, Classic} {
		c := MustCalculator(t, Config{Algorithm: alg})
		l := NewLedger(DefaultDecay())
		l.Charge("heavy", "", 64, t0.Add(-12*time.Hour), t0) // 64 CPUs for 12 hours
		l.Charge("light", "", 1, t0.Add(-60*day), t0.Add(-59*day))
		fs := c.Fairshares(l, t0, []Job{{User: "idle"}})
		h, li, idle := fs.Factor("heavy", ""), fs.Factor("light", ""), fs.Factor("idle", "")
		if !(h < li && li < idle) {
			t.Errorf("%s: heavy %v, light %v, idle %v; want heavy < light < idle", alg, h, li, idle)
		}
		if alg == FairTree && idle != 1 {
			t.Errorf("fair tree: a user with no usage ranks first (1), got %v", idle)
		}
	}
}

func TestAccountResolution(t *testing.T) {
	c := MustCalculator(t, Config{Accounts: []Account{{Name: "phys", Shares: 3}}, Users: []User{{Name: "ann", Account: "phys"}}})
	tr := c.Tree()
	for _, tc := range []struct{ user, acct, want string }{
		{"ann", "", "phys"}, {"ann", "phys", "phys"}, {"bob", "", DefaultAccountName}, {"ann", "nosuch", DefaultAccountName},
	} {
		if got := tr.Resolve(tc.user, tc.acct).Account; got != tc.want {
			t.Errorf("Resolve(%s, %q) = %s, want %s", tc.user, tc.acct, got, tc.want)
		}
	}
}

func TestTreeErrors(t *testing.T) {
	for _, tc := range []struct {
		accts []Account
		users []User
		want  string
	}{
		{[]Account{{Name: ""}}, nil, "an account has no name"},
		{[]Account{{Name: "a", Shares: -1}}, nil, "account a has invalid shares -1"},
		{[]Account{{Name: "a"}, {Name: "a"}}, nil, "account a is defined twice"},
		{[]Account{{Name: "a", Parent: "zz"}}, nil, "account a has unknown parent zz"},
		{[]Account{{Name: "a", Parent: "a"}}, nil, "account a is its own parent"},
		{[]Account{{Name: "a", Parent: "b"}, {Name: "b", Parent: "a"}}, nil, "form a cycle"},
		{nil, []User{{Name: "u", Account: "zz"}}, "user u is in unknown account zz"},
		{nil, []User{{Name: "u"}, {Name: "u"}}, "user u is listed twice"},
		{nil, []User{{Name: "u", Shares: math.NaN()}}, "user u has invalid shares"},
	} {
		_, err := NewTree(tc.accts, tc.users, "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v %+v: error %v, want %q", tc.accts, tc.users, err, tc.want)
		}
	}
	for _, cfg := range []Config{{Algorithm: "lottery"}, {Weights: Weights{Age: -1}}, {MaxAge: -time.Second},
		{Billing: BillingWeights{GPU: -1}}, {Decay: Decay{ResetPeriod: -day}}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

func TestAgeFactorIsCapped(t *testing.T) {
	c := MustCalculator(t, DefaultConfig())
	for _, tc := range []struct {
		wait time.Duration
		want float64
	}{
		{-time.Hour, 0}, {0, 0}, {6 * time.Hour, 0.5}, {12 * time.Hour, 1}, {30 * day, 1},
	} {
		if got := c.AgeFactor(t0.Add(-tc.wait), t0); !near(got, tc.want) {
			t.Errorf("wait %v: age %v, want %v", tc.wait, got, tc.want)
		}
	}
	if got := c.AgeFactor(time.Time{}, t0); got != 0 {
		t.Errorf("no eligible time: age %v", got)
	}
	short := MustCalculator(t, Config{MaxAge: time.Hour})
	if got := short.AgeFactor(t0.Add(-30*time.Minute), t0); got != 0.5 {
		t.Errorf("max age 1h, wait 30m: %v", got)
	}
}

func TestSizeFactorBothWays(t *testing.T) {
	cl := Cluster{Nodes: 10, CPUs: 100}
	large := MustCalculator(t, Config{})
	small := MustCalculator(t, Config{FavorSmall: true})
	for _, tc := range []struct {
		job  Job
		want float64 // favouring large
	}{
		{Job{Nodes: 1, CPUs: 1}, (0.1 + 0.01) / 2},
		{Job{Nodes: 5, CPUs: 50}, 0.5},
		{Job{Nodes: 10, CPUs: 100}, 1},
		{Job{Nodes: 20, CPUs: 400}, 1}, // clamped
		{Job{CPUs: 10}, (0.1 + 0.1) / 2},
	} {
		if got := large.SizeFactor(tc.job, cl); !near(got, tc.want) {
			t.Errorf("%+v large: %v, want %v", tc.job, got, tc.want)
		}
		if got := small.SizeFactor(tc.job, cl); !near(got, 1-tc.want) {
			t.Errorf("%+v small: %v, want %v", tc.job, got, 1-tc.want)
		}
	}
	if large.SizeFactor(Job{Nodes: 2, CPUs: 8}, cl) <= large.SizeFactor(Job{Nodes: 1, CPUs: 8}, cl) {
		t.Error("more nodes should weigh more when favouring large jobs")
	}
}

func TestPriorityBreakdown(t *testing.T) {
	c := MustCalculator(t, DefaultConfig())
	l := MustLedger(DefaultDecay(), map[string]float64{"heavy": 100})
	jobs := []Job{
		{User: "heavy", Eligible: t0.Add(-7 * day), Nodes: 10, CPUs: 100},
		{User: "fresh", Eligible: t0, Nodes: 1, CPUs: 1},
	}
	fs := c.Fairshares(l, t0, jobs)
	cl := Cluster{Nodes: 10, CPUs: 100}
	h := c.Priority(jobs[0], fs, t0, cl)
	f := c.Priority(jobs[1], fs, t0, cl)
	if h.Fairshare != (Factor{Value: 0.5, Weight: 10000, Part: 5000}) ||
		h.Age != (Factor{Value: 1, Weight: 1000, Part: 1000}) ||
		h.Size != (Factor{Value: 1, Weight: 100, Part: 100}) || h.Priority != 6100 {
		t.Errorf("heavy: %+v", h)
	}
	if f.Fairshare.Value != 1 || f.Age.Part != 0 || f.Size.Part != 6 || f.Priority != 10006 {
		t.Errorf("fresh: %+v", f)
	}
	if f.Priority <= h.Priority {
		t.Error("fairshare must outweigh age and size with the default weights")
	}
}

func TestReport(t *testing.T) {
	c := MustCalculator(t, Config{
		Accounts: []Account{{Name: "A", Shares: 3}, {Name: "B"}},
		Users:    []User{{Name: "a1", Account: "A"}, {Name: "b1", Account: "B"}},
	})
	l := MustLedger(Decay{HalfLife: -1}, map[string]float64{"a1": 1, "b1": 3})
	rows := c.Tree().Report(l, t0, nil, FairTree)
	type brief struct {
		acct, user   string
		depth        int
		share, usage float64
	}
	want := []brief{{"A", "", 0, 0.75, 0.25}, {"A", "a1", 1, 1, 1}, {"B", "", 0, 0.25, 0.75}, {"B", "b1", 1, 1, 1}}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v", rows)
	}
	for i, w := range want {
		r := rows[i]
		if r.Account != w.acct || r.User != w.user || r.Depth != w.depth || !near(r.NormShares, w.share) || !near(r.NormUsage, w.usage) {
			t.Errorf("row %d = %+v, want %+v", i, r, w)
		}
	}
	// A: LevelFS 0.75/0.25 = 3 beats B's 1/3, so a1 ranks first.
	if rows[0].LevelFS != 3 || rows[1].Fairshare != 1 || rows[3].Fairshare != 0.5 || rows[1].RawUsage != 3600 {
		t.Errorf("A %+v, a1 %+v, b1 %+v", rows[0], rows[1], rows[3])
	}
}

// TestFixedAndAgePartsSumToPriority: the split the simulator caches adds
// up to Priority for every mix of weights, users, sizes and waits.
func TestFixedAndAgePartsSumToPriority(t *testing.T) {
	for _, cfg := range []Config{
		DefaultConfig(),
		{Weights: Weights{Fairshare: 7, Age: 1_000_003, Size: 33}, MaxAge: 3 * day, FavorSmall: true},
	} {
		if cfg.MaxAge == 0 {
			cfg.MaxAge = 7 * day
		}
		c := MustCalculator(t, cfg)
		fs := c.Fairshares(MustLedger(DefaultDecay(), map[string]float64{"u1": 9, "u2": 1}), t0, []Job{{User: "u3"}})
		cl := Cluster{Nodes: 10, CPUs: 333}
		for _, user := range []string{"u1", "u2", "u3", "nobody"} {
			for _, cpus := range []int{0, 1, 7, 333, 1000} {
				for _, wait := range []time.Duration{-time.Hour, 0, time.Second, 1234567 * time.Millisecond, 2 * day, 30 * day} {
					j := Job{User: user, Eligible: t0, Nodes: 1 + cpus%3, CPUs: cpus}
					now := t0.Add(wait)
					want := c.Priority(j, fs, now, cl).Priority
					if got := c.FixedPart(j, fs, cl) + c.AgePart(now.Sub(j.Eligible)); got != want {
						t.Fatalf("%+v at +%s: parts sum to %d, Priority is %d", j, wait, got, want)
					}
				}
			}
		}
	}
}
