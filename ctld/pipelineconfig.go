package ctld

import (
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/config"
)

// Defaults of PipelineConfig.
const (
	DefaultMaxArrayTasks = 100000
	DefaultAcctRetention = 30 * 24 * time.Hour
	DefaultPurgeInterval = time.Hour
)

// PipelineConfig is the admin's say on job pipelines. Zero fields take the
// defaults.
type PipelineConfig struct {
	// KillOnInvalidDep is the default of --kill-on-invalid-dep: cancel a
	// pending job whose dependency can never be satisfied, rather than
	// leave it pending (reason DependencyNeverSatisfied). nil means yes.
	KillOnInvalidDep *bool
	// RequeueOnNodeFail is the default of --requeue/--no-requeue: a job
	// whose node fails goes back to PENDING instead of ending NODE_FAIL.
	RequeueOnNodeFail bool
	// MaxArrayTasks bounds the tasks of one array job (default 100000).
	MaxArrayTasks int
	// AcctRetention is how long finished jobs stay in the state file and
	// in `corral acct` (default 30 days; negative: forever).
	AcctRetention time.Duration
	// PurgeInterval is how often finished jobs past retention are purged
	// (default 1 hour).
	PurgeInterval time.Duration
}

// fromFile fills what c leaves unset from corral.conf's pipeline lines,
// then the rest from the defaults.
func (c *PipelineConfig) fromFile(f config.Pipeline) {
	if c.KillOnInvalidDep == nil {
		c.KillOnInvalidDep = f.KillOnInvalidDep
	}
	if !c.RequeueOnNodeFail && f.JobRequeue != nil {
		c.RequeueOnNodeFail = *f.JobRequeue
	}
	if c.MaxArrayTasks == 0 {
		c.MaxArrayTasks = f.MaxArrayTasks
	}
	if c.AcctRetention == 0 {
		c.AcctRetention = f.AcctRetention
	}
	c.setDefaults()
}

func (c *PipelineConfig) setDefaults() {
	if c.KillOnInvalidDep == nil {
		yes := true
		c.KillOnInvalidDep = &yes
	}
	if c.MaxArrayTasks <= 0 {
		c.MaxArrayTasks = DefaultMaxArrayTasks
	}
	if c.AcctRetention == 0 {
		c.AcctRetention = DefaultAcctRetention
	}
	if c.PurgeInterval <= 0 {
		c.PurgeInterval = DefaultPurgeInterval
	}
}

// killOnInvalidDep is whether job, whose dependency can never be
// satisfied, is cancelled: its own --kill-on-invalid-dep, else the
// admin's default.
func (c *PipelineConfig) killOnInvalidDep(job *api.Job) bool {
	if k := job.Spec.KillOnInvalidDep; k != nil {
		return *k
	}
	return *c.KillOnInvalidDep
}
