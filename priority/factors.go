package priority

import (
	"fmt"
	"math"
	"time"
)

// Weights multiply each factor; priority is the sum of the products.
type Weights struct {
	Fairshare int64 `json:"fairshare"`
	Age       int64 `json:"age"`
	Size      int64 `json:"size"`
}

// DefaultWeights follow the seed's order of importance: user shares, then
// age, then size.
func DefaultWeights() Weights { return Weights{Fairshare: 10000, Age: 1000, Size: 100} }

// Config is everything a Calculator needs.
type Config struct {
	Weights   Weights
	Algorithm Algorithm     // "" means FairTree
	MaxAge    time.Duration // age factor reaches 1 here; 0 means DefaultMaxAge
	// FavorSmall makes the size factor prefer small jobs instead of large.
	FavorSmall bool
	// Decay of usage (zero value: 7-day half-life, no reset) and what
	// resources cost (zero value: DefaultBillingWeights).
	Decay   Decay
	Billing BillingWeights
	// The share tree; with none, every user is in DefaultAccount with
	// equal shares.
	Accounts       []Account
	Users          []User
	DefaultAccount string // "" means DefaultAccountName
}

// DefaultMaxAge is the wait at which the age factor is full: half a day,
// not Slurm's 7 days. With Fair Tree over many users, one rank is worth
// only WeightFairshare / users, so an age that takes a week to build
// never lifts a heavy user's job; over half a day it does.
// docs/scheduling.md measures 12 h against 1 and 7 days.
const DefaultMaxAge = 12 * time.Hour

// DefaultConfig is Fair Tree, default weights, DefaultMaxAge, 7-day
// half-life, default billing weights.
func DefaultConfig() Config {
	return Config{Weights: DefaultWeights(), Algorithm: FairTree, MaxAge: DefaultMaxAge,
		Decay: DefaultDecay(), Billing: DefaultBillingWeights()}
}

// Job is what priority needs to know about a pending job.
type Job struct {
	User    string
	Account string // "" = the user's default account
	// Eligible is when the job could first have run (its submit time, or
	// when a hold or dependency was released); the wait since counts for age.
	Eligible time.Time
	Nodes    int // 0 means 1
	CPUs     int // in total, all nodes
}

// Cluster sizes the size factor.
type Cluster struct {
	Nodes int
	CPUs  int
}

// Factor is one term of a job's priority.
type Factor struct {
	Value  float64 `json:"value"`  // in [0, 1]
	Weight int64   `json:"weight"` // from the configuration
	Part   int64   `json:"part"`   // round(Value * Weight)
}

// Breakdown is a job's priority and where it comes from (corral prio).
type Breakdown struct {
	Fairshare Factor `json:"fairshare"`
	Age       Factor `json:"age"`
	Size      Factor `json:"size"`
	Priority  int64  `json:"priority"` // the sum of the parts
}

// Calculator computes priorities for one configuration.
type Calculator struct {
	cfg  Config
	tree *Tree
}

// New validates cfg and returns a Calculator.
func New(cfg Config) (*Calculator, error) {
	switch cfg.Algorithm {
	case "":
		cfg.Algorithm = FairTree
	case FairTree, Classic:
	default:
		return nil, fmt.Errorf("unknown fairshare algorithm %q (valid: fair_tree, classic)", cfg.Algorithm)
	}
	if cfg.Weights.Fairshare < 0 || cfg.Weights.Age < 0 || cfg.Weights.Size < 0 {
		return nil, fmt.Errorf("priority weights must not be negative (got %+v)", cfg.Weights)
	}
	if cfg.MaxAge < 0 {
		return nil, fmt.Errorf("maximum age must not be negative (got %s)", cfg.MaxAge)
	}
	if cfg.MaxAge == 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	if cfg.Billing == (BillingWeights{}) {
		cfg.Billing = DefaultBillingWeights()
	}
	if b := cfg.Billing; b.CPU < 0 || b.MemGiB < 0 || b.GPU < 0 {
		return nil, fmt.Errorf("billing weights must not be negative (got %+v)", b)
	}
	if cfg.Decay.ResetPeriod < 0 {
		return nil, fmt.Errorf("usage reset period must not be negative (got %s)", cfg.Decay.ResetPeriod)
	}
	tree, err := NewTree(cfg.Accounts, cfg.Users, cfg.DefaultAccount)
	if err != nil {
		return nil, err
	}
	return &Calculator{cfg: cfg, tree: tree}, nil
}

// Tree is the calculator's share tree.
func (c *Calculator) Tree() *Tree { return c.tree }

// NewLedger returns an empty ledger with the configured decay.
func (c *Calculator) NewLedger() *Ledger { return NewLedger(c.cfg.Decay) }

// Billing is what a job holding a costs per second, with the configured
// weights: the controller charges it with Ledger.Charge.
func (c *Calculator) Billing(a Alloc) float64 { return c.cfg.Billing.Billing(a) }

// Fairshares computes the fairshare factors at time at for every
// configured user, every user with usage, and the owners of jobs.
func (c *Calculator) Fairshares(l *Ledger, at time.Time, jobs []Job) Fairshares {
	extra := make([]Assoc, len(jobs))
	for i, j := range jobs {
		extra[i] = Assoc{User: j.User, Account: j.Account}
	}
	return c.tree.Fairshare(l, at, extra, c.cfg.Algorithm)
}

// AgeFactor is min(1, eligible wait / max age); 0 before eligibility.
func (c *Calculator) AgeFactor(eligible, now time.Time) float64 {
	if eligible.IsZero() {
		return 0
	}
	return c.ageFactor(now.Sub(eligible))
}

// ageFactor is AgeFactor of a job eligible for wait (0 if not yet).
func (c *Calculator) ageFactor(wait time.Duration) float64 {
	if wait <= 0 {
		return 0
	}
	return math.Min(1, wait.Seconds()/c.cfg.MaxAge.Seconds())
}

// SizeFactor is the mean of the job's share of the cluster's nodes and of
// its CPUs, in [0, 1]; with FavorSmall, one minus that.
func (c *Calculator) SizeFactor(j Job, cl Cluster) float64 {
	frac := func(n, of int) float64 {
		if of <= 0 {
			return 0
		}
		return math.Min(1, float64(max(n, 0))/float64(of))
	}
	large := (frac(max(j.Nodes, 1), cl.Nodes) + frac(j.CPUs, cl.CPUs)) / 2
	if c.cfg.FavorSmall {
		return 1 - large
	}
	return large
}

// Priority computes a job's priority from precomputed fairshares.
func (c *Calculator) Priority(j Job, fs Fairshares, now time.Time, cl Cluster) Breakdown {
	w := c.cfg.Weights
	b := Breakdown{
		Fairshare: factor(fs.Factor(j.User, j.Account), w.Fairshare),
		Age:       factor(c.AgeFactor(j.Eligible, now), w.Age),
		Size:      factor(c.SizeFactor(j, cl), w.Size),
	}
	b.Priority = b.Fairshare.Part + b.Age.Part + b.Size.Part
	return b
}

func factor(v float64, weight int64) Factor {
	return Factor{Value: v, Weight: weight, Part: int64(math.Round(v * float64(weight)))}
}

// FixedPart and AgePart split Priority(j, fs, now, cl).Priority into
// what stays the same while fs does (the fairshare and size parts) and
// what grows with now, for a caller that ranks a long queue again and
// again between fairshare computations (the trace simulator).
func (c *Calculator) FixedPart(j Job, fs Fairshares, cl Cluster) int64 {
	w := c.cfg.Weights
	return factor(fs.Factor(j.User, j.Account), w.Fairshare).Part + factor(c.SizeFactor(j, cl), w.Size).Part
}

// AgePart is the age part of the priority of a job eligible for wait
// (now less its eligible time); see FixedPart.
func (c *Calculator) AgePart(wait time.Duration) int64 {
	return factor(c.ageFactor(wait), c.cfg.Weights.Age).Part
}
