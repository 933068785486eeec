package ctld

import (
	"os"
	"strconv"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/config"
	"github.com/corral-hpc/corral/priority"
	"github.com/corral-hpc/corral/sched"
	"github.com/corral-hpc/corral/slurmfmt"
)

// configView is the controller's configuration as scontrol show config
// prints Slurm's: the settings corral has, under Slurm's names and in
// the order and spelling of Slurm 22.05's list (config_info.c), fixed
// at start as corral reads its file once. Settings corral lacks are left
// out rather than printed with values it does not honour.
func configView(file *config.File, cfg *Config, planner sched.Planner, now time.Time) api.ClusterConfig {
	var out []api.ConfigEntry
	add := func(k, v string) { out = append(out, api.ConfigEntry{Key: k, Value: v}) }
	add("ClusterName", ClusterName)
	inactive := int64(0) // Slurm's 0: never
	if cfg.AllocIdleLimit > 0 {
		inactive = int64(cfg.AllocIdleLimit / time.Second)
	}
	add("InactiveLimit", strconv.FormatInt(inactive, 10)+" sec")
	add("JobRequeue", yesOne(cfg.Pipeline.RequeueOnNodeFail))
	p := file.Scheduling.Priority
	if file.Scheduling.Basic {
		add("PriorityType", "priority/basic")
	} else {
		halfLife := p.Decay.HalfLife
		if halfLife == 0 {
			halfLife = priority.DefaultDecay().HalfLife
		}
		add("PriorityDecayHalfLife", slurmfmt.Clock(max(int64(halfLife/time.Second), 0)))
		add("PriorityFavorSmall", map[bool]string{true: "Yes", false: "No"}[p.FavorSmall])
		flags := ""
		if p.Algorithm == priority.Classic {
			flags = "NO_FAIR_TREE"
		}
		add("PriorityFlags", flags)
		maxAge := p.MaxAge
		if maxAge == 0 {
			maxAge = priority.DefaultConfig().MaxAge
		}
		add("PriorityMaxAge", slurmfmt.Clock(int64(maxAge/time.Second)))
		add("PriorityUsageResetPeriod", config.ResetPeriodName(p.Decay.ResetPeriod))
		add("PriorityType", "priority/multifactor")
		add("PriorityWeightAge", strconv.FormatInt(p.Weights.Age, 10))
		add("PriorityWeightFairShare", strconv.FormatInt(p.Weights.Fairshare, 10))
		add("PriorityWeightJobSize", strconv.FormatInt(p.Weights.Size, 10))
	}
	add("SchedulerType", schedulerType(planner))
	add("SelectType", "select/cons_tres") // CPUs, memory and GPUs of a node are shared out
	host, err := os.Hostname()
	if err != nil {
		host = "localhost"
	}
	add("SlurmctldHost[0]", host)
	return api.ClusterConfig{Loaded: now, Entries: out}
}

// schedulerType is Slurm's name for the planner: backfill, or builtin
// (first come, first served).
func schedulerType(p sched.Planner) string {
	if b, ok := p.(sched.Backfill); ok && b.Mode != sched.FCFS {
		return "sched/backfill"
	}
	return "sched/builtin"
}

func yesOne(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
