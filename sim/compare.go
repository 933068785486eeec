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
// unfair starts is made once and shared; the replays run concurrently,
// each on its own state, so the results are the same as one at a time.
func Compare(tr *Trace, cfg Config, policies []Policy) ([]*Result, error) {
	out := make([]*Result, len(policies))
	if cfg.Reference == nil {
		ref := Config{Procs: cfg.Procs, Policy: ReferencePolicy, MaxJobs: cfg.MaxJobs}
		res, err := Run(tr, ref)
		if err != nil {
			return nil, err
		}
		cfg.Reference = res.Records
		if i := slices.Index(policies, ReferencePolicy); i >= 0 {
			out[i] = res
		}
	}
	err := parallel(len(policies), func(i int) error {
		if out[i] != nil {
			return nil
		}
		c := cfg
		c.Policy = policies[i]
		res, err := Run(tr, c)
		out[i] = res
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
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
