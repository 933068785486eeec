package priority

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// BillingWeights are Slurm's TRESBillingWeights: what one unit of each
// resource costs per second of use.
type BillingWeights struct {
	CPU    float64 `json:"cpu"`     // per CPU
	MemGiB float64 `json:"mem_gib"` // per GiB of memory
	GPU    float64 `json:"gpu"`     // per physical GPU; fractions pro rata
}

// DefaultBillingWeights: CPU=1, Mem=0.25G, GPU=2.
func DefaultBillingWeights() BillingWeights {
	return BillingWeights{CPU: 1, MemGiB: 0.25, GPU: 2}
}

// Alloc is what a job holds, summed over all its nodes.
type Alloc struct {
	CPUs     int
	MemBytes int64
	GPUs     float64 // physical GPUs; 0.5 is half of one
}

// Billing is the job's cost per second.
func (w BillingWeights) Billing(a Alloc) float64 {
	return w.CPU*float64(a.CPUs) + w.MemGiB*float64(a.MemBytes)/float64(1<<30) + w.GPU*a.GPUs
}

// Decay says how usage is forgotten.
type Decay struct {
	// HalfLife: usage loses half its weight every HalfLife; 0 means the
	// default, 7 days; negative disables decay (Slurm's
	// PriorityDecayHalfLife=0).
	HalfLife time.Duration
	// ResetPeriod, if set, clears all usage at every period boundary.
	// Slurm's five periods (ResetDaily ... ResetYearly) are calendar
	// periods in Location, as PriorityUsageResetPeriod: midnight, Sunday
	// midnight, the first of the month, of the quarter, of the year. Any
	// other length counts multiples from the Unix epoch.
	ResetPeriod time.Duration
	// Location is the cluster's time zone for calendar resets; nil is UTC
	// (the controller passes its local zone).
	Location *time.Location
}

// The reset periods PriorityUsageResetPeriod names, as ResetPeriod values.
const (
	ResetDaily     = 24 * time.Hour
	ResetWeekly    = 7 * ResetDaily
	ResetMonthly   = 30 * ResetDaily
	ResetQuarterly = 91 * ResetDaily
	ResetYearly    = 365 * ResetDaily
)

// DefaultDecay is a 7-day half-life and no reset.
func DefaultDecay() Decay { return Decay{HalfLife: 7 * 24 * time.Hour} }

// halfLife is the effective half-life; 0 means no decay.
func (d Decay) halfLife() time.Duration {
	switch {
	case d.HalfLife == 0:
		return DefaultDecay().HalfLife
	case d.HalfLife < 0:
		return 0
	}
	return d.HalfLife
}

// factor is how much of a unit of usage is left after dt.
func (d Decay) factor(dt time.Duration) float64 {
	h := d.halfLife()
	if h == 0 || dt <= 0 {
		return 1
	}
	return math.Exp2(-dt.Seconds() / h.Seconds())
}

// lastReset is the most recent reset boundary at or before t (zero time
// without a reset period).
func (d Decay) lastReset(t time.Time) time.Time {
	if d.ResetPeriod <= 0 {
		return time.Time{}
	}
	loc := d.Location
	if loc == nil {
		loc = time.UTC
	}
	lt := t.In(loc)
	y, m, day := lt.Date()
	switch d.ResetPeriod {
	case ResetDaily:
		return time.Date(y, m, day, 0, 0, 0, 0, loc)
	case ResetWeekly:
		return time.Date(y, m, day-int(lt.Weekday()), 0, 0, 0, 0, loc)
	case ResetMonthly:
		return time.Date(y, m, 1, 0, 0, 0, 0, loc)
	case ResetQuarterly:
		return time.Date(y, m-(m-1)%3, 1, 0, 0, 0, 0, loc)
	case ResetYearly:
		return time.Date(y, time.January, 1, 0, 0, 0, 0, loc)
	}
	p := int64(d.ResetPeriod)
	n := t.UnixNano()
	b := n - ((n%p)+p)%p
	return time.Unix(0, b).UTC()
}

// Assoc names a user within an account. An empty Account means the
// user's default account in the tree.
type Assoc struct {
	User    string `json:"user"`
	Account string `json:"account,omitempty"`
}

type usage struct {
	value float64
	at    time.Time // the time value refers to
}

// Ledger holds decayed usage per association. It is not safe for
// concurrent use; the controller owns one.
type Ledger struct {
	decay Decay
	usage map[Assoc]usage
	keys  []Assoc // sorted: sums over associations are always added in this order
}

// NewLedger returns an empty ledger. Load a stored one with
// json.Unmarshal into a ledger made here, so it keeps its decay settings.
func NewLedger(d Decay) *Ledger { return &Ledger{decay: d, usage: map[Assoc]usage{}} }

func compareAssoc(a, b Assoc) int {
	if c := strings.Compare(a.User, b.User); c != 0 {
		return c
	}
	return strings.Compare(a.Account, b.Account)
}

// setUsage stores u for k, keeping keys sorted.
func (l *Ledger) setUsage(k Assoc, u usage) {
	if l.usage == nil {
		l.usage = map[Assoc]usage{}
	}
	if _, ok := l.usage[k]; !ok {
		i, _ := slices.BinarySearchFunc(l.keys, k, compareAssoc)
		l.keys = slices.Insert(l.keys, i, k)
	}
	l.usage[k] = u
}

// valueAt decays u to time t (u.at <= t), honouring resets.
func (l *Ledger) valueAt(u usage, t time.Time) float64 {
	if r := l.decay.lastReset(t); !r.IsZero() && u.at.Before(r) {
		return 0
	}
	return u.value * l.decay.factor(t.Sub(u.at))
}

// Charge adds billing x seconds of use over [from, to) for the user in the
// account. Usage is charged continuously: a second of use at time s
// weighs 2^(-(t-s)/HalfLife) at time t, so charging [a,b) then [b,c)
// equals charging [a,c) at once. Charges may arrive in any order.
func (l *Ledger) Charge(user, account string, billing float64, from, to time.Time) {
	if billing <= 0 || !to.After(from) {
		return
	}
	if r := l.decay.lastReset(to); !r.IsZero() && from.Before(r) {
		from = r // use before the last reset no longer counts
		if !to.After(from) {
			return
		}
	}
	secs := to.Sub(from).Seconds()
	add := billing * secs
	if h := l.decay.halfLife().Seconds(); h > 0 {
		// integral of billing * 2^(-(to-s)/h) ds over [from, to)
		add = billing * h / math.Ln2 * -math.Expm1(-secs*math.Ln2/h)
	}
	k := Assoc{User: user, Account: account}
	u := l.usage[k]
	switch {
	case u.at.IsZero():
		u = usage{value: add, at: to}
	case !to.Before(u.at):
		u = usage{value: l.valueAt(u, to) + add, at: to}
	default: // a late charge: bring it forward to the stored time
		u.value += l.valueAt(usage{value: add, at: to}, u.at)
	}
	l.setUsage(k, u)
}

// Usage is one association's decayed usage at time t (billing-seconds).
func (l *Ledger) Usage(user, account string, t time.Time) float64 {
	u, ok := l.usage[Assoc{User: user, Account: account}]
	if !ok {
		return 0
	}
	if t.Before(u.at) {
		t = u.at // never "undecay"
	}
	return l.valueAt(u, t)
}

// UserUsage is a user's decayed usage in all accounts together.
func (l *Ledger) UserUsage(user string, t time.Time) float64 {
	sum := 0.0
	i, _ := slices.BinarySearchFunc(l.keys, Assoc{User: user}, compareAssoc)
	for ; i < len(l.keys) && l.keys[i].User == user; i++ {
		sum += l.Usage(user, l.keys[i].Account, t)
	}
	return sum
}

// Assocs lists the associations with usage, sorted by user then account.
func (l *Ledger) Assocs() []Assoc { return slices.Clone(l.keys) }

// Prune forgets associations whose usage at t has decayed below min, so a
// long-lived ledger does not grow without bound. It returns how many.
func (l *Ledger) Prune(t time.Time, min float64) int {
	kept := l.keys[:0]
	for _, k := range l.keys {
		if l.Usage(k.User, k.Account, t) < min {
			delete(l.usage, k)
		} else {
			kept = append(kept, k)
		}
	}
	n := len(l.keys) - len(kept)
	l.keys = kept
	return n
}

// ledgerJSON is the stored form: each value with the time it refers to.
type ledgerJSON struct {
	Version int         `json:"version"`
	Usage   []entryJSON `json:"usage"`
}

type entryJSON struct {
	Assoc
	Value float64   `json:"value"`
	At    time.Time `json:"at"`
}

// MarshalJSON stores the usage (not the decay settings, which are
// configuration) in a stable order.
func (l *Ledger) MarshalJSON() ([]byte, error) {
	doc := ledgerJSON{Version: 1, Usage: []entryJSON{}}
	for _, k := range l.keys {
		u := l.usage[k]
		doc.Usage = append(doc.Usage, entryJSON{Assoc: k, Value: u.value, At: u.at.UTC()})
	}
	return json.Marshal(doc)
}

// UnmarshalJSON replaces the ledger's usage with the stored one, keeping
// its decay settings. Nothing changes if the document is invalid.
func (l *Ledger) UnmarshalJSON(data []byte) error {
	var doc ledgerJSON
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("usage ledger: %w", err)
	}
	if doc.Version != 1 {
		return fmt.Errorf("usage ledger: unsupported version %d (want 1)", doc.Version)
	}
	m := make(map[Assoc]usage, len(doc.Usage))
	for _, e := range doc.Usage {
		if e.User == "" || e.At.IsZero() || e.Value < 0 || math.IsNaN(e.Value) || math.IsInf(e.Value, 0) {
			return fmt.Errorf("usage ledger: invalid entry %+v", e)
		}
		if _, dup := m[e.Assoc]; dup {
			return fmt.Errorf("usage ledger: duplicate entry for user %q account %q", e.User, e.Account)
		}
		m[e.Assoc] = usage{value: e.Value, at: e.At}
	}
	keys := make([]Assoc, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareAssoc)
	l.usage, l.keys = m, keys
	return nil
}
