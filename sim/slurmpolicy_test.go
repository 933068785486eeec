package sim

import (
	"fmt"
	"strings"
	"testing"
)

// slurmStarts replays lines under PolicySlurm with the slurm.conf text
// conf ("" for the defaults) and returns each job's start.
func slurmStarts(t *testing.T, conf string, lines ...string) map[int64]int64 {
	t.Helper()
	cfg := Config{Policy: PolicySlurm}
	if conf != "" {
		sc, err := ParseSlurmConf(strings.NewReader(conf))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Slurm = &sc
	}
	return startsOf(MustRun(t, MustTrace(t, lines...), cfg))
}

// backfillGap: job 2 needs the whole machine when job 1 ends at 1000;
// job 3 fits beside job 1 and ends long before, so backfilling may start
// it, but only the backfill scheduler does, at its next bf_interval tick.
var backfillGap = []string{
	"; MaxProcs: 4",
	line(1, 0, 1000, 2, 1000, 1),
	line(2, 1, 60, 4, 60, 2),
	line(3, 5, 300, 1, 300, 3),
}

// windowed: job 2 could start only after job 1's 200000 s, beyond
// bf_window's day, so it gets no reservation and job 3 takes the free
// processor for longer than job 2 would wait.
var windowed = []string{
	"; MaxProcs: 4",
	line(1, 0, 200000, 3, 200000, 1),
	line(2, 1, 600, 4, 600, 2),
	line(3, 2, 300000, 1, 300000, 3),
}

// bySize: the main scheduler at job 1's end takes the queue in priority
// order; job 3 (the whole machine) is first only when size counts.
var bySize = []string{
	"; MaxProcs: 4",
	line(1, 0, 100, 4, 100, 1),
	line(2, 1, 10, 1, 10, 2),
	line(3, 2, 10, 4, 10, 3),
}

// recalc: at job 1's end (420 s) job 3 (the whole machine, submitted at
// 310) comes first if its age counts from then, job 2 (older, narrower)
// if priorities are still those of the recalculation at 300 s, when job
// 3 had none: age 1000 over 5 minutes, size 6400.
var recalc = []string{
	"; MaxProcs: 4",
	line(1, 0, 420, 4, 420, 1),
	line(2, 0, 100, 3, 100, 2),
	line(3, 310, 100, 4, 100, 3),
}

const recalcConf = "PriorityType=priority/multifactor\nPriorityWeightAge=1000\nPriorityWeightJobSize=6400\nPriorityMaxAge=5\n"

func TestSlurmPolicy(t *testing.T) {
	for _, tc := range []struct {
		name  string
		conf  string
		trace []string
		want  map[int64]int64
	}{
		{"backfill waits for its tick", "", backfillGap, map[int64]int64{1: 0, 2: 1000, 3: 30}},
		{"bf_interval=100", "SchedulerParameters=bf_interval=100", backfillGap, map[int64]int64{1: 0, 2: 1000, 3: 100}},
		{"bf_max_job_test=1 tests only the head", "SchedulerParameters=bf_max_job_test=1", backfillGap,
			map[int64]int64{1: 0, 2: 1000, 3: 1060}},
		{"sched/builtin never backfills", "SchedulerType=sched/builtin", backfillGap, map[int64]int64{1: 0, 2: 1000, 3: 1060}},
		{"beyond bf_window: no reservation", "", windowed, map[int64]int64{1: 0, 2: 300030, 3: 30}},
		{"within a 3-day bf_window: reserved", "SchedulerParameters=bf_window=4320", windowed,
			map[int64]int64{1: 0, 2: 200000, 3: 200600}},
		{"priority/basic: submit order", "", bySize, map[int64]int64{1: 0, 2: 100, 3: 110}},
		{"job size weight: the big job first", "PriorityType=priority/multifactor\nPriorityWeightJobSize=1000", bySize,
			map[int64]int64{1: 0, 2: 110, 3: 100}},
		{"priorities as of the last PriorityCalcPeriod", recalcConf, recalc, map[int64]int64{1: 0, 2: 420, 3: 520}},
		{"PriorityCalcPeriod=1", recalcConf + "PriorityCalcPeriod=1", recalc, map[int64]int64{1: 0, 2: 520, 3: 420}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := slurmStarts(t, tc.conf, tc.trace...); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("starts %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCPUProfileEarliest(t *testing.T) {
	// 4 CPUs: 1 free until 100, 3 until 200, all 4 after.
	p := &cpuProfile{at: []int64{0, 100, 200}, free: []int{1, 3, 4}}
	for _, tc := range []struct {
		from, dur int64
		cpus      int
		want      int64
	}{
		{0, 50, 1, 0},
		{0, 500, 1, 0},
		{0, 50, 2, 100},
		{150, 10, 3, 150},
		{0, 10, 4, 200},
		{0, 10, 5, never},
	} {
		if got := p.earliest(tc.from, tc.dur, tc.cpus); got != tc.want {
			t.Errorf("earliest(from %d, %d s, %d CPUs) = %d, want %d", tc.from, tc.dur, tc.cpus, got, tc.want)
		}
	}
	p.hold(50, 150, 1) // free: 1 0 2 3 4 at 0 50 100 150 200
	if got := p.earliest(0, 60, 1); got != 100 {
		t.Errorf("after a hold, 1 CPU for 60 s from 0 starts at %d, want 100", got)
	}
	if got := p.earliest(0, 60, 3); got != 150 {
		t.Errorf("after a hold, 3 CPUs for 60 s start at %d, want 150", got)
	}
}
