package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/priority"
)

func TestParseSlurmConf(t *testing.T) {
	c, err := ParseSlurmConf(strings.NewReader(`# a site's slurm.conf
ClusterName=site
NodeName=n[1-4] CPUs=8 State=UNKNOWN
PartitionName=batch Nodes=n[1-4] Default=YES MaxTime=INFINITE
PriorityType=priority/multifactor
PriorityWeightAge=1000   # comments end a line
PriorityWeightFairshare=10000
PriorityWeightJobSize=100
PriorityWeightPartition=1000
PriorityMaxAge=14-0
PriorityDecayHalfLife=0
PriorityCalcPeriod=1
PriorityFavorSmall=YES
PriorityFlags=NO_FAIR_TREE
PriorityUsageResetPeriod=WEEKLY
SchedulerType=sched/backfill
SchedulerParameters=bf_window=2880,bf_max_job_test=1000,bf_resolution=300,bf_interval=60,bf_continue,default_queue_depth=50
`))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultSlurmConfig()
	want.Priority.Weights = priority.Weights{Age: 1000, Fairshare: 10000, Size: 100}
	want.Priority.MaxAge = 14 * 24 * time.Hour
	want.Priority.Decay = priority.Decay{HalfLife: -1, ResetPeriod: 7 * 24 * time.Hour}
	want.Priority.FavorSmall, want.Priority.Algorithm = true, priority.Classic
	want.CalcPeriod, want.Window, want.MaxJobTest = time.Minute, 48*time.Hour, 1000
	want.Resolution, want.Interval, want.QueueDepth = 5*time.Minute, time.Minute, 50
	if c.Priority.Weights != want.Priority.Weights || c.Priority.MaxAge != want.Priority.MaxAge ||
		c.Priority.Decay != want.Priority.Decay || c.Priority.FavorSmall != want.Priority.FavorSmall ||
		c.Priority.Algorithm != want.Priority.Algorithm || c.CalcPeriod != want.CalcPeriod ||
		c.Window != want.Window || c.MaxJobTest != want.MaxJobTest || c.Resolution != want.Resolution ||
		c.Interval != want.Interval || c.QueueDepth != want.QueueDepth || !c.Backfill {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
	// Weights count only with priority/multifactor, as in Slurm.
	basic, err := ParseSlurmConf(strings.NewReader("PriorityWeightAge=1000\n"))
	if err != nil || basic.Priority.Weights != (priority.Weights{}) {
		t.Fatalf("priority/basic: %+v, %v", basic.Priority.Weights, err)
	}
}

func TestParseSlurmConfErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"PriorityType=priority/fancy", `line 1: PriorityType: "priority/fancy" is not priority/basic or priority/multifactor`},
		{"\nPriorityWeightAge=-5", `line 2: PriorityWeightAge: "-5" is not a weight (a whole number, 0 or more)`},
		{"PriorityWeightAgee=5", "line 1: PriorityWeightAgee: not a priority setting the simulator knows"},
		{"PriorityMaxAge=soon", `line 1: PriorityMaxAge: invalid time limit "soon"`},
		{"PriorityCalcPeriod=0", `line 1: PriorityCalcPeriod: "0" is not a number of minutes (1 or more)`},
		{"PriorityUsageResetPeriod=HOURLY", `line 1: PriorityUsageResetPeriod: "HOURLY" is not a reset period (valid: NONE, DAILY, WEEKLY, MONTHLY, QUARTERLY, YEARLY)`},
		{"SchedulerType=sched/gang", `line 1: SchedulerType: "sched/gang" is not sched/backfill or sched/builtin`},
		{"SchedulerParameters=bf_window=0", `line 1: SchedulerParameters: bf_window="0": want minutes from 1 to 43200`},
		{"SchedulerParameters=bf_max_job_test", `line 1: SchedulerParameters: bf_max_job_test="": want a job count from 1 to 1000000`},
		{"SchedulerParameters=bf_busy_nodes", "line 1: SchedulerParameters: bf_busy_nodes is not modelled by the simulator"},
	} {
		_, err := ParseSlurmConf(strings.NewReader(tc.in))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}
