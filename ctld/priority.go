package ctld

import (
	"iter"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fairshare"
	"github.com/corral-hpc/corral/priority"
)

// jobPriority is the one place a pending job's priority comes from; the
// scheduler calls it for every pending job when it builds a snapshot and
// shows the result in Job.Priority. It is package fairshare's multifactor
// priority; nice is subtracted afterwards, with hold, begin and
// dependency checks (pendingOf, blockedOfLocked). The caller holds s.mu (read
// is enough).
func (s *Server) jobPriority(j *api.Job, now time.Time) int64 {
	return s.fs.Priority(j, now, cycleView{s})
}

// cycleView serves a cycle's jobs and cluster size to package fairshare
// while the caller holds s.mu.
type cycleView struct{ s *Server }

var _ fairshare.Cluster = cycleView{}

func (c cycleView) Active() iter.Seq[*api.Job]  { return records(c.s.q.unfinished()) }
func (c cycleView) Pending() iter.Seq[*api.Job] { return c.s.q.pending() }
func (c cycleView) Size() priority.Cluster      { return c.s.nodes.size() }
