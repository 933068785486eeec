package ctld

import (
	"time"

	"github.com/corral-hpc/corral/api"
)

// jobPriority is the one place a pending job's priority comes from; the
// scheduler calls it for every pending job when it builds a snapshot and
// shows the result in Job.Priority.
//
// For now every job has priority 0, so the planner orders jobs by submit
// time. Multifactor priority (package priority: fairshare, age, size)
// plugs in here.
func (s *Server) jobPriority(j *api.Job, now time.Time) int64 {
	return 0
}
