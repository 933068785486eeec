package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Pipeline is what corral.conf says about job pipelines (arrays,
// dependencies, requeue, accounting), on lines of its own:
//
//	KillOnInvalidDep=NO JobRequeue=1 MaxArrayTasks=10001 AcctRetention=90-0 InactiveLimit=60
//
// Nil and zero fields were not given; the controller has the defaults.
type Pipeline struct {
	// KillOnInvalidDep=YES|NO: cancel a job whose dependency can never be
	// satisfied (--kill-on-invalid-dep's default; the controller's is YES).
	KillOnInvalidDep *bool
	// JobRequeue=1|0: requeue a job whose node fails (--requeue's
	// default; the controller's is 0).
	JobRequeue *bool
	// MaxArrayTasks=N bounds the tasks of one array job.
	MaxArrayTasks int
	// AcctRetention=TIME keeps finished jobs this long (Slurm time:
	// 30-0 is 30 days); UNLIMITED keeps them forever (-1).
	AcctRetention time.Duration
	// InactiveLimit=SECONDS cancels an allocation whose salloc or srun
	// stopped renewing it for that long (a kill -9, a lost host); 0 never
	// does, as in Slurm. Nil: not given.
	InactiveLimit *time.Duration
}

// pipelineKeys lists the keys of pipeline lines, in the order documented.
var pipelineKeys = []string{"KillOnInvalidDep", "JobRequeue", "MaxArrayTasks", "AcctRetention", "InactiveLimit"}

// set applies one pipeline line; settings remembers where each key was
// set (shared with the scheduling lines) so a second setting is refused.
func (p *Pipeline) set(fields []string, lineNo int, settings map[string]int) error {
	return setLine(fields, lineNo, settings, "a pipeline line", pipelineKeys, func(key, v string) error {
		if err := p.setKey(key, v); err != nil {
			return fmt.Errorf("%s=%s: %w", key, v, err)
		}
		return nil
	})
}

func (p *Pipeline) setKey(key, v string) error {
	switch key {
	case "KillOnInvalidDep", "JobRequeue":
		var b bool
		switch strings.ToUpper(v) {
		case "YES", "1":
			b = true
		case "NO", "0":
		default:
			return errors.New("use YES or NO (1 or 0)")
		}
		if key == "JobRequeue" {
			p.JobRequeue = &b
		} else {
			p.KillOnInvalidDep = &b
		}
	case "MaxArrayTasks":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return errors.New("give a whole number of tasks from 1")
		}
		p.MaxArrayTasks = n
	case "AcctRetention":
		secs, err := ParseTime(v)
		if err != nil {
			return err
		}
		p.AcctRetention = time.Duration(secs) * time.Second
		if secs == 0 {
			p.AcctRetention = -1 // UNLIMITED: never purge
		}
	case "InactiveLimit":
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 65533 { // slurm.conf's bound
			return errors.New("give whole seconds from 0 (never) to 65533")
		}
		d := time.Duration(n) * time.Second
		p.InactiveLimit = &d
	}
	return nil
}
