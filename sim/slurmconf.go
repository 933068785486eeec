package sim

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/corral-hpc/corral/jobspec"
	"github.com/corral-hpc/corral/priority"
)

// ParseSlurmConf reads the scheduling part of a slurm.conf into the
// defaults it overrides: PriorityType, PriorityWeightAge, -Fairshare and
// -JobSize, PriorityMaxAge, PriorityDecayHalfLife, PriorityCalcPeriod,
// PriorityFavorSmall, PriorityFlags (NO_FAIR_TREE), SchedulerType and
// SchedulerParameters' bf_window, bf_max_job_test, bf_resolution,
// bf_interval and default_queue_depth. Other lines (nodes, partitions,
// logging) describe what the trace already fixes and are not read; a
// Priority* or bf_* setting the replay cannot honour is an error, so no
// configuration is half applied. Errors name the line.
func ParseSlurmConf(r io.Reader) (SlurmConfig, error) {
	c := DefaultSlurmConfig()
	multifactor := false
	var w priority.Weights
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		for _, tok := range strings.Fields(text) {
			k, v, ok := strings.Cut(tok, "=")
			if !ok {
				continue // a value of the line's first key, or not ours
			}
			if err := c.set(strings.ToLower(k), v, &w, &multifactor); err != nil {
				return SlurmConfig{}, fmt.Errorf("line %d: %s: %w", line, k, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return SlurmConfig{}, err
	}
	if multifactor {
		c.Priority.Weights = w
	}
	return c, nil
}

// ignoredPriority are Priority* keys that change nothing here: one
// partition, no QOS, no associations beyond users, no TRES weights.
var ignoredPriority = map[string]bool{
	"priorityweightpartition": true, "priorityweightqos": true, "priorityweightassoc": true,
	"priorityweighttres": true, "priorityparameters": true, "prioritysitefactorplugin": true,
}

func (c *SlurmConfig) set(k, v string, w *priority.Weights, multifactor *bool) error {
	weight := func(dst *int64) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%q is not a weight (a whole number, 0 or more)", v)
		}
		*dst = n
		return nil
	}
	dur := func(dst *time.Duration, zero time.Duration) error {
		s, err := jobspec.ParseTimeLimit(v)
		if err != nil {
			return err
		}
		*dst = time.Duration(s) * time.Second
		if s == 0 {
			*dst = zero
		}
		return nil
	}
	switch k {
	case "prioritytype":
		switch strings.ToLower(v) {
		case "priority/basic":
			*multifactor = false
		case "priority/multifactor":
			*multifactor = true
		default:
			return fmt.Errorf("%q is not priority/basic or priority/multifactor", v)
		}
	case "priorityweightage":
		return weight(&w.Age)
	case "priorityweightfairshare":
		return weight(&w.Fairshare)
	case "priorityweightjobsize":
		return weight(&w.Size)
	case "prioritymaxage":
		return dur(&c.Priority.MaxAge, time.Second)
	case "prioritydecayhalflife":
		return dur(&c.Priority.Decay.HalfLife, -1) // 0: no decay
	case "prioritycalcperiod":
		n, err := strconv.Atoi(v) // minutes
		if err != nil || n < 1 {
			return fmt.Errorf("%q is not a number of minutes (1 or more)", v)
		}
		c.CalcPeriod = time.Duration(n) * time.Minute
	case "priorityusageresetperiod":
		// Calendar periods in virtual time's zone (UTC), as the ledger
		// resets them.
		periods := map[string]time.Duration{"none": 0, "daily": priority.ResetDaily, "weekly": priority.ResetWeekly,
			"monthly": priority.ResetMonthly, "quarterly": priority.ResetQuarterly, "yearly": priority.ResetYearly}
		d, ok := periods[strings.ToLower(v)]
		if !ok {
			return fmt.Errorf("%q is not a reset period (valid: NONE, DAILY, WEEKLY, MONTHLY, QUARTERLY, YEARLY)", v)
		}
		c.Priority.Decay.ResetPeriod = d
	case "priorityfavorsmall":
		c.Priority.FavorSmall = strings.EqualFold(v, "yes")
	case "priorityflags":
		for _, f := range strings.Split(strings.ToUpper(v), ",") {
			if f == "NO_FAIR_TREE" {
				c.Priority.Algorithm = priority.Classic
			}
		}
	case "schedulertype":
		switch strings.ToLower(v) {
		case "sched/backfill":
			c.Backfill = true
		case "sched/builtin":
			c.Backfill = false
		default:
			return fmt.Errorf("%q is not sched/backfill or sched/builtin", v)
		}
	case "schedulerparameters":
		return c.setSchedulerParameters(v)
	default:
		if strings.HasPrefix(k, "priority") && !ignoredPriority[k] {
			return fmt.Errorf("not a priority setting the simulator knows")
		}
	}
	return nil
}

// schedulerParameters are the SchedulerParameters the replay models, in
// the units and ranges slurm.conf(5) gives them.
var schedulerParameters = map[string]struct {
	what   string
	lo, hi int
	set    func(*SlurmConfig, int)
}{
	"bf_window":           {"minutes", 1, 43200, func(c *SlurmConfig, n int) { c.Window = time.Duration(n) * time.Minute }},
	"bf_max_job_test":     {"a job count", 1, 1_000_000, func(c *SlurmConfig, n int) { c.MaxJobTest = n }},
	"bf_resolution":       {"seconds", 1, 3600, func(c *SlurmConfig, n int) { c.Resolution = time.Duration(n) * time.Second }},
	"bf_interval":         {"seconds", 1, 10800, func(c *SlurmConfig, n int) { c.Interval = time.Duration(n) * time.Second }},
	"default_queue_depth": {"a job count", 1, 1_000_000, func(c *SlurmConfig, n int) { c.QueueDepth = n }},
}

// setSchedulerParameters reads the comma-separated SchedulerParameters.
func (c *SlurmConfig) setSchedulerParameters(v string) error {
	for _, p := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(p, "=")
		k = strings.ToLower(strings.TrimSpace(k))
		if param, known := schedulerParameters[k]; known {
			n, err := strconv.Atoi(val)
			if !ok || err != nil || n < param.lo || n > param.hi {
				return fmt.Errorf("%s=%q: want %s from %d to %d", k, val, param.what, param.lo, param.hi)
			}
			param.set(c, n)
			continue
		}
		// bf_continue changes nothing: passes are never cut short in
		// virtual time. The main scheduler's other knobs (defer,
		// sched_interval...) are not read: it runs at every arrival
		// and end.
		if strings.HasPrefix(k, "bf_") && k != "bf_continue" {
			return fmt.Errorf("%s is not modelled by the simulator", k)
		}
	}
	return nil
}
