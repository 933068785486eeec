package ctld

import (
	"iter"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fairshare"
	"github.com/corral-hpc/corral/priority"
)

// priority is the one place a pending job's priority comes from; the
// scheduler calls it for every pending job when it builds a snapshot and
// shows the result in Job.Priority. It is package fairshare's multifactor
// priority; nice is subtracted afterwards, with hold, begin and
// dependency checks (pendingOf, snapshotBuilder.blockedOf). The caller
// holds Server.mu (read is enough).
func (b *snapshotBuilder) priority(j *api.Job, now time.Time) int64 {
	return b.fs.Priority(j, now, b.view())
}

// view is the cycle's jobs and cluster size for package fairshare.
func (b *snapshotBuilder) view() cycleView { return cycleView{b.q, b.nodes} }

// cycleView serves a cycle's jobs and cluster size to package fairshare
// while the caller holds Server.mu.
type cycleView struct {
	q     *queue
	nodes *nodeRegistry
}

var _ fairshare.Cluster = cycleView{}

func (c cycleView) Running() iter.Seq[*api.Job] { return records(c.q.runningJobs()) }
func (c cycleView) Pending() iter.Seq[*api.Job] { return c.q.pending() }
func (c cycleView) Size() priority.Cluster      { return c.nodes.size() }

// Blocked is the job's blocking reason now, as the snapshot computes it
// (notes are the snapshot's to take).
func (c cycleView) Blocked(job *api.Job, now time.Time) api.Reason {
	return c.q.blocked(job, job.ArrayTaskID, now, nil)
}
