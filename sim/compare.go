package sim

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// ParsePolicies reads a comma-separated list of policies (--compare):
// each known, none twice, at least one.
func ParsePolicies(s string) ([]Policy, error) {
	var out []Policy
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, fmt.Errorf("empty policy name in %q", s)
		}
		p, err := ParsePolicy(name)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, p) {
			return nil, fmt.Errorf("policy %s named twice in %q", p, s)
		}
		out = append(out, p)
	}
	return out, nil
}

// Compare replays tr under each policy (cfg.Policy is ignored) and
// returns the results in the order of policies. The reference replay for
// unfair starts is made once, as one of the replays when the reference
// policy is among them; the replays, the reference's included, run
// concurrently, each on its own state, so the results are the same as
// one at a time, and unfair starts are counted once all have ended.
func Compare(tr *Trace, cfg Config, policies []Policy) ([]*Result, error) {
	runs := slices.Clone(policies)
	refAt := slices.Index(runs, ReferencePolicy)
	if cfg.Reference == nil && refAt < 0 {
		refAt = len(runs)
		runs = append(runs, ReferencePolicy)
	}
	out := make([]*Result, len(runs))
	err := parallel(len(runs), func(i int) error {
		c := cfg
		c.Policy = runs[i]
		pol, err := setupOf(c)
		if err != nil {
			return err
		}
		out[i], err = runWith(tr, c, pol)
		return err
	})
	if err != nil {
		return nil, err
	}
	ref := cfg.Reference
	if ref == nil {
		ref = out[refAt].Records
	}
	for i, res := range out {
		// As Run: the reference replay itself counts none unless the
		// caller handed a reference in.
		if cfg.Reference != nil || i != refAt {
			res.Metrics.UnfairStarts = UnfairStarts(res.Records, ref)
		}
		res.Metrics.UnfairReference = ReferencePolicy
	}
	return out[:len(policies)], nil
}

// parallel calls f(0..n-1) on up to GOMAXPROCS goroutines and returns
// the error of the lowest index that failed, so the error too does not
// depend on scheduling.
func parallel(n int, f func(int) error) error {
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
