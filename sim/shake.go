package sim

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Shake is tr with every job's submit time moved by a whole number of
// seconds drawn uniformly from [-jitter, +jitter] (never before 0): the
// "input shaking" of Tsafrir, Ouaknine and Feitelson (2007), which
// shows how much of a difference between policies is the luck of one
// arrival order. The same seed and replay number give the same trace.
func Shake(tr *Trace, jitter int64, seed uint64, replay int) *Trace {
	rng := rand.New(rand.NewPCG(seed, uint64(replay)))
	out := &Trace{Header: tr.Header, Jobs: slices.Clone(tr.Jobs)}
	for i := range out.Jobs {
		d := rng.Int64N(2*jitter+1) - jitter
		out.Jobs[i].Submit = max(0, out.Jobs[i].Submit+d)
	}
	return out
}

// Spread is one metric over shaken replays.
type Spread struct {
	Mean   float64 `json:"mean"`
	Stddev float64 `json:"stddev"` // sample standard deviation
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Spreads are a policy's headline metrics over shaken replays.
type Spreads struct {
	Policy  Policy            `json:"policy"`
	Replays int               `json:"replays"`
	Metrics map[string]Spread `json:"metrics"` // by Metrics' JSON names
}

// ShakeConfig is a shaken comparison.
type ShakeConfig struct {
	Replays int
	Jitter  int64 // seconds
	Seed    uint64
}

// ShakeCompare runs Compare on sc.Replays shaken copies of tr and
// returns the spread of each policy's headline metrics, in the order of
// policies. Each copy has its own reference replay.
func ShakeCompare(tr *Trace, cfg Config, policies []Policy, sc ShakeConfig) ([]Spreads, error) {
	runs := make([][]*Result, sc.Replays)
	err := parallel(sc.Replays, func(i int) error {
		c := cfg
		c.Reference = nil
		res, err := Compare(Shake(tr, sc.Jitter, sc.Seed, i), c, policies)
		runs[i] = res
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]Spreads, len(policies))
	for p, pol := range policies {
		out[p] = Spreads{Policy: pol, Replays: sc.Replays, Metrics: map[string]Spread{}}
		for _, row := range Headline {
			xs := make([]float64, sc.Replays)
			for i := range runs {
				xs[i] = row.Value(runs[i][p].Metrics)
			}
			out[p].Metrics[row.Key] = spreadOf(xs)
		}
	}
	return out, nil
}

func spreadOf(xs []float64) Spread {
	s := Spread{Min: math.Inf(1), Max: math.Inf(-1)}
	for _, x := range xs {
		s.Mean += x
		s.Min, s.Max = min(s.Min, x), max(s.Max, x)
	}
	s.Mean /= float64(len(xs))
	if len(xs) > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.Stddev = math.Sqrt(ss / float64(len(xs)-1))
	}
	return s
}
