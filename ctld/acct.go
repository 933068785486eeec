package ctld

import (
	"cmp"
	"log"
	"slices"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/ctld/internal/lockorder"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/gpu"
	"github.com/corral-hpc/corral/jobspec"
)

// The accounting history is the finished jobs the controller keeps (and a
// requeued job's earlier runs), read from memory, which holds what the
// state file holds. Finished jobs stay for PipelineConfig.AcctRetention
// and are then purged from both.

// history is the history f names that caller may see: their own jobs',
// or every job's for operators and up and with SharedView=YES. Its
// records are made as they are sent, a chunk of items at a time (next).
func (s *Server) history(caller peer, f api.AcctFilter) (*acctHistory, error) {
	if s.gate.SeesAll(caller.caller()) {
		caller = peer{} // every job's history
	}
	if caller.UID != 0 {
		me := s.users.name(caller.UID)
		for _, u := range f.Users {
			if u != me {
				return nil, fault.Errorf(fault.Forbidden, "you may only see your own jobs' history (you are %s, not %s)", me, u)
			}
		}
	}
	s.mu.RLock()
	items := s.q.history(&f, caller)
	s.mu.RUnlock()
	h := &acctHistory{mu: &s.mu, items: sortAcct(items), f: f, caller: caller, steps: s.store.StepsOfJobs, log: s.log}
	h.page()
	return h, nil
}

// acctHistory is a planned history: the items, by pointer, whose records
// are made under the read lock a chunk of items at a time, so the
// working set is one chunk, not the history.
type acctHistory struct {
	mu     *lockorder.RWMutex[lockorder.Server] // Server.mu
	items  []acctItem
	f      api.AcctFilter
	caller peer // UID 0: every user's
	at     int  // next item
	recs   []api.AcctRecord
	// steps reads the steps of a chunk's jobs from the store; a failure
	// is logged and the chunk goes without them.
	steps func(jobIDs []uint64) (map[uint64][]*store.StepRecord, error)
	log   *log.Logger
}

// done reports whether every record has been handed out.
func (h *acctHistory) done() bool { return h.at >= len(h.items) }

// next is the records of the next chunk of items that match the filter,
// by job ID then run; valid until the next call.
func (h *acctHistory) next() []api.AcctRecord {
	h.recs = h.recs[:0]
	end := min(h.at+listChunk, len(h.items))
	h.mu.RLock()
	for _, it := range h.items[h.at:end] {
		switch {
		case it.job != nil:
			h.recs = append(h.recs, acctRecords(it.job)...)
		case it.rem.remJob() != nil && it.rem.remJob().State.Terminal(): // not purged since
			h.recs = append(h.recs, remRecord(it.rem))
		}
	}
	h.mu.RUnlock()
	h.at = end
	h.recs = slices.DeleteFunc(h.recs, func(r api.AcctRecord) bool { return !acctMatches(&r, &h.f, h.caller) })
	h.addSteps()
	return h.recs
}

// addSteps puts each job's steps on its latest run's record (records
// come by job ID, then run). The jobs of a chunk are read in one
// transaction, after the read lock is released.
func (h *acctHistory) addSteps() {
	if h.steps == nil || len(h.recs) == 0 {
		return
	}
	var ids []uint64
	for i, r := range h.recs {
		if r.ArrayTasks == "" && (i+1 == len(h.recs) || h.recs[i+1].JobID != r.JobID) {
			ids = append(ids, r.JobID)
		}
	}
	steps, err := h.steps(ids)
	if err != nil {
		h.log.Printf("accounting: listing without steps: %v", err)
		return
	}
	for i, r := range h.recs {
		if i+1 < len(h.recs) && h.recs[i+1].JobID == r.JobID || r.ArrayTasks != "" {
			continue
		}
		for _, st := range steps[r.JobID] {
			h.recs[i].Steps = append(h.recs[i].Steps, st.Step)
		}
	}
}

// acctItem is one source of history records: a job (its runs) or an
// array's remainder of tasks that ended without running.
type acctItem struct {
	id  uint64
	job *api.Job
	rem *arrayJob
}

// sortAcct orders history items by ID, each once.
func sortAcct(items []acctItem) []acctItem {
	slices.SortFunc(items, func(a, b acctItem) int {
		if c := compareIDs(a.id, b.id); c != 0 {
			return c
		}
		return cmp.Compare(isRem(a), isRem(b)) // a job before a remainder
	})
	return slices.CompactFunc(items, func(a, b acctItem) bool { return a == b })
}

func isRem(it acctItem) int {
	if it.rem != nil {
		return 1
	}
	return 0
}

func acctMatches(r *api.AcctRecord, f *api.AcctFilter, caller peer) bool {
	began := r.SubmitTime
	if r.StartTime != nil {
		began = *r.StartTime
	}
	return (caller.UID == 0 || r.UID == caller.UID) &&
		(len(f.Users) == 0 || slices.Contains(f.Users, r.User)) &&
		(len(f.States) == 0 || slices.Contains(f.States, r.State)) &&
		(len(f.Names) == 0 || slices.Contains(f.Names, r.Name)) &&
		(f.Start.IsZero() || !r.EndTime.Before(f.Start)) &&
		(f.End.IsZero() || !began.After(f.End))
}

// acctRecords are a job's finished runs: earlier runs of a requeued job,
// then the job itself once it has ended.
func acctRecords(j *api.Job) []api.AcctRecord {
	var out []api.AcctRecord
	base := api.AcctRecord{JobID: j.ID, ArrayJobID: j.ArrayJobID, ArrayTaskID: j.ArrayTaskID, Name: j.Name,
		Partition: j.Partition, Account: j.Spec.Account, User: j.User, UID: j.UID, SubmitTime: j.SubmitTime,
		CPUs: j.CPUs, NodeCount: max(j.NodeCount, 1)}
	for i, run := range j.Runs {
		r := base
		r.Run, r.State, r.Signal, r.EndTime, r.Nodes, r.Message = i, run.State, run.Signal, run.EndTime, run.Nodes, run.Message
		if run.ExitCode != nil {
			r.ExitCode = *run.ExitCode
		}
		if !run.StartTime.IsZero() {
			start := run.StartTime
			r.StartTime = &start
		}
		r.MaxRSSBytes, r.TotalCPUUsec = run.PeakMemBytes, run.CPUTimeUsec
		out = append(out, withGPUTime(withTimes(r), run.GPUs))
	}
	if !j.State.Terminal() || j.EndTime == nil {
		return out
	}
	r := base
	r.Run, r.State, r.Signal, r.EndTime, r.Nodes, r.Message = len(j.Runs), j.State, j.Signal, *j.EndTime, j.Nodes, j.Message
	if j.ExitCode != nil {
		r.ExitCode = *j.ExitCode
	}
	r.StartTime, r.CancelledBy, r.Steps = j.StartTime, j.CancelledBy, j.PartSteps()
	r.MaxRSSBytes, r.TotalCPUUsec = j.PeakMemBytes, j.CPUTimeUsec
	var gpus float64
	if len(j.GPUAlloc) > 0 {
		gpus = gpu.Physical(j, len(j.Nodes))
	}
	return append(out, withGPUTime(withTimes(r), gpus))
}

// withTimes fills the elapsed and CPU times (withGPUTime the GPU time).
func withTimes(r api.AcctRecord) api.AcctRecord {
	if r.StartTime != nil && r.EndTime.After(*r.StartTime) {
		r.ElapsedS = int64(r.EndTime.Sub(*r.StartTime) / time.Second)
	}
	r.CPUTimeS = r.ElapsedS * int64(r.CPUs) * int64(r.NodeCount)
	if r.Nodes == nil {
		r.Nodes = []string{}
	}
	return r
}

// remRecord is the record of an array's tasks that ended without running.
func remRecord(a *arrayJob) api.AcctRecord {
	v := remView(a)
	r := api.AcctRecord{JobID: v.ID, ArrayJobID: v.ArrayJobID, ArrayTasks: v.ArrayTasks, Name: v.Name, Partition: v.Partition,
		Account: v.Spec.Account, User: v.User, UID: v.UID, State: v.State, SubmitTime: v.SubmitTime,
		CPUs: v.CPUs, NodeCount: max(v.NodeCount, 1), Message: v.Message}
	if v.EndTime != nil {
		r.EndTime = *v.EndTime
	}
	return withTimes(r)
}

// purgeFinished removes finished jobs that ended more than the retention
// ago from the state file and memory; jobs a pending dependency names stay.
func (s *Server) purgeFinished(now time.Time) {
	retention := s.cfg.Pipeline.AcctRetention
	if retention < 0 {
		return
	}
	cutoff := now.Add(-retention)
	old := func(job *api.Job) bool {
		return job.State.Terminal() && job.EndTime != nil && job.EndTime.Before(cutoff)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := s.q.dependedOn()
	jobs, rems, err := s.q.purge(old, keep)
	if err != nil {
		s.log.Printf("purging finished jobs: %v", err)
		return
	}
	if jobs+rems == 0 {
		return
	}
	s.log.Printf("purged %d finished jobs and %d array remainders that ended before %s (retention %s)",
		jobs, rems, cutoff.Format(time.RFC3339), jobspec.FormatDuration(int64(retention/time.Second)))
}
