package config

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/priority"
	"github.com/corral-hpc/corral/sched"
)

// File is everything corral.conf says: partitions, and how jobs are
// prioritised and planned.
type File struct {
	Partitions []api.Partition
	Scheduling Scheduling
	Pipeline   Pipeline // arrays, dependencies, requeue, accounting (pipeline.go)
	Access     Access   // administrators and shared view (access.go)
	Steps      Steps    // MpiDefault (steps.go)
	// Features are the nodes' features from NodeName lines (nodes.go),
	// by node name; nil without such lines.
	Features map[string][]string
	// Templates are the ResourceTemplate lines (resourcetemplates.go),
	// in file order.
	Templates []api.ResourceTemplate
}

// Scheduling is the priority and planner configuration.
type Scheduling struct {
	// Priority is the multifactor configuration: weights, fairshare
	// algorithm, usage decay, billing weights and the share tree.
	Priority priority.Config
	// Basic is PriorityType=basic: every job has priority 0 (less its
	// nice), so jobs start in submit order; usage is still recorded.
	Basic bool
	// Planner is the backfill planner with the configured mode and depth.
	Planner sched.Backfill
}

// DefaultScheduling is what a file without scheduling lines gets:
// multifactor priority with package priority's defaults (Fair Tree,
// weights 10000/1000/100, 12-hour maximum age, 7-day half-life, billing CPU=1
// Mem=0.25G GRES/gpu=2) and sched.DefaultBackfill over the whole queue:
// EASY with its reservations for the two longest-waiting jobs of each
// partition, the policy `corral sim --policy default` replays
// (docs/scheduling.md).
func DefaultScheduling() Scheduling {
	return Scheduling{Priority: priority.DefaultConfig(), Planner: sched.DefaultBackfill()}
}

// schedulingKeys lists the keys of scheduling lines, in the order
// documented (docs/scheduling.md). A scheduling line holds any of them,
// each at most once in the whole file.
var schedulingKeys = []string{
	"PriorityType", "PriorityWeightFairshare", "PriorityWeightAge", "PriorityWeightJobSize",
	"PriorityMaxAge", "PriorityDecayHalfLife", "PriorityUsageResetPeriod", "PriorityFavorSmall",
	"FairshareAlgorithm", "TRESBillingWeights", "SchedulerType", "BackfillMode", "BackfillDepth",
	"BackfillOrder", "BackfillReserveOldest", "BackfillReserveOldestAfter", "BackfillGuardAfter",
	"BackfillPack", "BackfillPackFill",
}

// lineKinds are the keys a line may start with, besides scheduling keys.
var lineKinds = []string{"PartitionName", "NodeName", "AccountName", "UserName", "ResourceTemplate"}

// LoadOrDefaults reads corral.conf at path; without one (path "") it gives the
// defaults: one partition holding every node, DefaultScheduling.
func LoadOrDefaults(path string) (*File, error) {
	if path == "" {
		return &File{Partitions: Default(), Scheduling: DefaultScheduling()}, nil
	}
	return LoadFile(path)
}

// LoadFile reads and parses the whole file at path.
func LoadFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	return ParseFile(f, path)
}

// ParseFile reads corral.conf from r; source names r in errors, which
// always give the line. A line is a partition (PartitionName=...), an
// account (AccountName=...), a user (UserName=...) or scheduling settings
// (any of schedulingKeys). Exactly one partition is the default: the one
// marked Default=YES, else the first.
func ParseFile(r io.Reader, source string) (*File, error) {
	f := &File{Scheduling: DefaultScheduling()}
	seen := make(map[string]int)     // partition -> line
	settings := make(map[string]int) // scheduling key -> line
	var shares shareLines
	templates := make(map[string]int) // resource template -> line
	defaultLine := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		at := func(err error) error { return fmt.Errorf("%s:%d: %w", source, lineNo, err) }
		first, _, _ := strings.Cut(fields[0], "=")
		switch {
		case strings.EqualFold(first, "AccountName"):
			if err := shares.addAccount(fields, lineNo); err != nil {
				return nil, at(err)
			}
			continue
		case strings.EqualFold(first, "NodeName"):
			if f.Features == nil {
				f.Features = map[string][]string{}
			}
			if err := addNodeLine(fields, f.Features); err != nil {
				return nil, at(err)
			}
			continue
		case strings.EqualFold(first, "ResourceTemplate"):
			if err := addTemplate(fields, lineNo, templates, f); err != nil {
				return nil, at(err)
			}
			continue
		case strings.EqualFold(first, "UserName"):
			if err := shares.addUser(fields, lineNo); err != nil {
				return nil, at(err)
			}
			continue
		case canonicalIn(first, pipelineKeys) != "":
			if err := f.Pipeline.set(fields, lineNo, settings); err != nil {
				return nil, at(err)
			}
			continue
		case canonicalIn(first, accessKeys) != "":
			if err := f.Access.set(fields, lineNo, settings); err != nil {
				return nil, at(err)
			}
			continue
		case canonicalIn(first, stepKeys) != "":
			if err := f.Steps.set(fields, lineNo, settings); err != nil {
				return nil, at(err)
			}
			continue
		case canonicalIn(first, schedulingKeys) != "":
			if err := f.Scheduling.set(fields, lineNo, settings); err != nil {
				return nil, at(err)
			}
			continue
		case canonicalKey(first) == "" && strings.Contains(fields[0], "="):
			return nil, at(fmt.Errorf("unknown key %s (a line starts with %s, or holds scheduling keys: %s, or pipeline keys: %s, or step keys: %s)",
				first, strings.Join(lineKinds, ", "), strings.Join(schedulingKeys, ", "), strings.Join(pipelineKeys, ", "), strings.Join(stepKeys, ", ")))
		}
		p, err := parseLine(fields)
		if err != nil {
			return nil, at(err)
		}
		if prev, dup := seen[p.Name]; dup {
			return nil, at(fmt.Errorf("partition %s is already defined on line %d", p.Name, prev))
		}
		seen[p.Name] = lineNo
		if p.Default {
			if defaultLine != 0 {
				return nil, at(fmt.Errorf("partition %s is marked Default=YES but line %d already has the default", p.Name, defaultLine))
			}
			defaultLine = lineNo
		}
		f.Partitions = append(f.Partitions, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if len(f.Partitions) == 0 {
		return nil, fmt.Errorf("%s: no partitions defined (add a line such as: PartitionName=batch Nodes=ALL Default=YES)", source)
	}
	if defaultLine == 0 {
		f.Partitions[0].Default = true
	}
	if line, err := f.Scheduling.checkPack(settings); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", source, line, err)
	}
	if err := shares.apply(&f.Scheduling.Priority, source); err != nil {
		return nil, err
	}
	if _, err := priority.New(f.Scheduling.Priority); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return f, nil
}

func canonicalIn(k string, keys []string) string {
	for _, key := range keys {
		if strings.EqualFold(k, key) {
			return key
		}
	}
	return ""
}

// set applies one scheduling line; settings remembers where each key was
// set so a second setting is refused.
func (s *Scheduling) set(fields []string, lineNo int, settings map[string]int) error {
	return setLine(fields, lineNo, settings, "a scheduling line", schedulingKeys, func(key, v string) error {
		if v == "" {
			return fmt.Errorf("%s has no value", key)
		}
		if err := s.setKey(key, v, settings); err != nil {
			return fmt.Errorf("%s=%s: %w", key, v, err)
		}
		return nil
	})
}

func (s *Scheduling) setKey(key, v string, settings map[string]int) error {
	p := &s.Priority
	var err error
	switch key {
	case "PriorityType":
		switch strings.TrimPrefix(strings.ToLower(v), "priority/") {
		case "multifactor":
			s.Basic = false
		case "basic":
			s.Basic = true
		default:
			return errors.New("use multifactor or basic")
		}
	case "PriorityWeightFairshare":
		p.Weights.Fairshare, err = parseWeight(v)
	case "PriorityWeightAge":
		p.Weights.Age, err = parseWeight(v)
	case "PriorityWeightJobSize":
		p.Weights.Size, err = parseWeight(v)
	case "PriorityMaxAge":
		var secs int64
		if secs, err = ParseTime(v); err == nil && secs == 0 {
			err = errors.New("the maximum age must be more than 0")
		}
		p.MaxAge = time.Duration(secs) * time.Second
	case "PriorityDecayHalfLife":
		var secs int64
		secs, err = ParseTime(v)
		p.Decay.HalfLife = time.Duration(secs) * time.Second
		if secs == 0 {
			p.Decay.HalfLife = -1 // as in Slurm: 0 turns decay off
		}
	case "PriorityUsageResetPeriod":
		p.Decay.ResetPeriod, err = parseResetPeriod(v)
		p.Decay.Location = time.Local // calendar periods in the cluster's zone
	case "PriorityFavorSmall":
		p.FavorSmall, err = parseYesNo(v)
	case "FairshareAlgorithm":
		switch strings.ToLower(v) {
		case "fair_tree", "fairtree":
			p.Algorithm = priority.FairTree
		case "classic":
			p.Algorithm = priority.Classic
		default:
			return errors.New("use fair_tree or classic")
		}
	case "TRESBillingWeights":
		p.Billing, err = ParseBillingWeights(v)
	case "SchedulerType":
		switch strings.TrimPrefix(strings.ToLower(v), "sched/") {
		case "backfill":
			if s.Planner.Mode == sched.FCFS {
				s.Planner.Mode = sched.DefaultBackfill().Mode
			}
		case "fcfs", "builtin":
			if _, set := settings["BackfillMode"]; set {
				return errors.New("BackfillMode is set too, but fcfs does not backfill")
			}
			s.Planner.Mode = sched.FCFS
		default:
			return errors.New("use backfill or fcfs")
		}
	case "BackfillMode":
		var m sched.Mode
		if m, err = sched.ParseMode(v); err == nil && m == sched.FCFS {
			err = errors.New("use conservative or easy (SchedulerType=fcfs turns backfill off)")
		}
		if err == nil && s.Planner.Mode == sched.FCFS {
			err = errors.New("SchedulerType=fcfs does not backfill")
		}
		if err == nil {
			s.Planner.Mode = m
		}
	case "BackfillDepth":
		var n int64
		n, err = strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return errors.New("use a whole number of jobs, 0 for the whole queue")
		}
		s.Planner.Depth = int(n)
	case "BackfillOrder":
		s.Planner.Order, err = sched.ParseOrder(v)
	case "BackfillReserveOldest":
		var n int64
		n, err = strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return errors.New("use a whole number of jobs per partition, 0 to reserve for the top job by priority")
		}
		s.Planner.ReserveOldest = int(n)
	case "BackfillReserveOldestAfter":
		var secs int64
		secs, err = ParseTime(v) // 0: from the first second
		s.Planner.ReserveOldestAfter = time.Duration(secs) * time.Second
	case "BackfillGuardAfter":
		var secs int64
		secs, err = ParseTime(v) // 0 turns the guard off
		s.Planner.GuardAfter = time.Duration(secs) * time.Second
	case "BackfillPack":
		var n int64
		n, err = strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 || n > maxPack {
			return fmt.Errorf("use a whole number of candidates from 0 (off) to %d", maxPack)
		}
		s.Planner.Pack = int(n)
	case "BackfillPackFill":
		s.Planner.PackFill, err = parseYesNo(v)
	}
	return err
}

// maxPack bounds BackfillPack: each plan solves a knapsack over that many
// candidates (sched/pack.go), in time proportional to their number.
const maxPack = 1024

// checkPack refuses set selection where it would do nothing, naming the
// line of the key at fault: Pack chooses among easy's backfill
// candidates, and PackFill changes how.
func (s *Scheduling) checkPack(settings map[string]int) (int, error) {
	b := s.Planner
	if b.Pack > 0 && b.Mode != sched.EASY {
		return settings["BackfillPack"], errors.New("BackfillPack chooses among easy's backfill candidates; it needs BackfillMode=easy")
	}
	if b.PackFill && b.Pack == 0 {
		return settings["BackfillPackFill"], errors.New("BackfillPackFill=YES needs BackfillPack=N, the number of candidates it chooses among")
	}
	return 0, nil
}

func parseWeight(v string) (int64, error) {
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return 0, errors.New("use a whole number from 0 to 4294967295")
	}
	return int64(n), nil
}

func parseYesNo(v string) (bool, error) {
	switch strings.ToUpper(v) {
	case "YES":
		return true, nil
	case "NO":
		return false, nil
	}
	return false, errors.New("use YES or NO")
}

// Reset periods are calendar periods in the controller's time zone
// (package priority's Reset constants): midnight, Sunday midnight, the
// first of the month, of the quarter, of the year.
var resetPeriods = []struct {
	name   string
	period time.Duration
}{
	{"NONE", 0}, {"DAILY", priority.ResetDaily}, {"WEEKLY", priority.ResetWeekly},
	{"MONTHLY", priority.ResetMonthly}, {"QUARTERLY", priority.ResetQuarterly}, {"YEARLY", priority.ResetYearly},
}

// ResetPeriodName is a reset period as corral.conf and Slurm spell it.
func ResetPeriodName(d time.Duration) string {
	for _, p := range resetPeriods {
		if p.period == d {
			return p.name
		}
	}
	return d.String() // package priority takes any period; the file does not
}

func parseResetPeriod(v string) (time.Duration, error) {
	var names []string
	for _, p := range resetPeriods {
		if strings.EqualFold(v, p.name) {
			return p.period, nil
		}
		names = append(names, p.name)
	}
	return 0, fmt.Errorf("use %s", strings.Join(names, ", "))
}

// ParseBillingWeights reads Slurm's TRESBillingWeights:
// CPU=1.0,Mem=0.25G,GRES/gpu=2.0. Mem is per GiB with a G suffix, per TiB
// with T, per MiB with M or no suffix (as in Slurm). A resource not listed
// costs nothing; at least one must cost something.
func ParseBillingWeights(v string) (priority.BillingWeights, error) {
	var w priority.BillingWeights
	given := make(map[string]bool)
	for _, part := range strings.Split(v, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return w, fmt.Errorf("%q is not RESOURCE=WEIGHT", part)
		}
		key := strings.ToLower(name)
		if key != "cpu" && key != "mem" && key != "gres/gpu" {
			return w, fmt.Errorf("unknown resource %s (valid: CPU, Mem, GRES/gpu)", name)
		}
		if given[key] {
			return w, fmt.Errorf("%s is given twice", name)
		}
		given[key] = true
		perGiB := 1.0 // what the weight is multiplied by to cost one GiB
		if key == "mem" && val != "" {
			switch strings.ToUpper(val[len(val)-1:]) {
			case "M":
				perGiB, val = 1024, val[:len(val)-1]
			case "G":
				val = val[:len(val)-1]
			case "T":
				perGiB, val = 1.0/1024, val[:len(val)-1]
			default: // a bare number is per MiB
				perGiB = 1024
			}
		}
		f, err := strconv.ParseFloat(val, 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || strings.ContainsAny(val, "xXpP_") {
			return w, fmt.Errorf("%s: invalid weight %q: use a number of 0 or more", name, val)
		}
		switch key {
		case "cpu":
			w.CPU = f
		case "mem":
			w.MemGiB = f * perGiB
		case "gres/gpu":
			w.GPU = f
		}
	}
	if w == (priority.BillingWeights{}) {
		return w, errors.New("every weight is 0: give at least one resource a cost")
	}
	return w, nil
}
