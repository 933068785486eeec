package ctld

import (
	"bufio"
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/gpu"
	"github.com/corral-hpc/corral/jobspec"
)

// The accounting history is the finished jobs the controller keeps (and a
// requeued job's earlier runs), read from memory, which holds what the
// state file holds. Finished jobs stay for PipelineConfig.AcctRetention
// and are then purged from both.

// handleAcct serves GET /v1/acct?user=&id=&state=&start=&end= (values of
// one parameter ORed, parameters ANDed). Users see their own jobs only.
func (s *Server) handleAcct(w http.ResponseWriter, r *http.Request, caller peer) {
	var f api.AcctFilter
	for key, vals := range r.URL.Query() {
		if !slices.Contains([]string{"user", "id", "state", "start", "end"}, key) {
			writeError(w, fault.Errorf(fault.Invalid, "unknown query parameter %q (valid: user, id, state, start, end)", key))
			return
		}
		for _, v := range splitList(vals) {
			if err := addAcctFilter(&f, key, v); err != nil {
				writeError(w, err)
				return
			}
		}
	}
	if s.gate.SeesAll(caller.caller()) {
		caller = peer{} // operators and up, and everyone with SharedView=YES, see every job's history
	}
	if caller.UID != 0 {
		me := s.users.name(caller.UID)
		for _, u := range f.Users {
			if u != me {
				writeError(w, fault.Errorf(fault.Forbidden, "you may only see your own jobs' history (you are %s, not %s)", me, u))
				return
			}
		}
	}
	s.mu.RLock()
	items := s.q.history(&f, caller)
	s.mu.RUnlock()
	s.writeAcct(w, sortAcct(items), &f, caller)
}

func addAcctFilter(f *api.AcctFilter, key, v string) error {
	switch key {
	case "user":
		f.Users = append(f.Users, v)
	case "id":
		id, task, err := api.ParseJobRef(v)
		if err != nil {
			return fault.Errorf(fault.Invalid, "%v", err)
		}
		if task != nil {
			f.Tasks = append(f.Tasks, api.TaskRef{JobID: id, Task: *task})
		} else {
			f.IDs = append(f.IDs, id)
		}
	case "state":
		st, err := parseAcctState(v)
		if err != nil {
			return fault.Errorf(fault.Invalid, "%v", err)
		}
		f.States = append(f.States, st)
	case "start", "end":
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return fault.Errorf(fault.Invalid, "invalid %s=%q: use an RFC 3339 time such as 2026-01-20T12:34:00Z", key, v)
		}
		if key == "start" {
			f.Start = t
		} else {
			f.End = t
		}
	}
	return nil
}

// parseAcctState is api.ParseJobState plus REQUEUED (RQ), the state of a
// requeued run.
func parseAcctState(s string) (api.JobState, error) {
	if strings.EqualFold(s, string(api.StateRequeued)) || strings.EqualFold(s, api.StateRequeued.Short()) {
		return api.StateRequeued, nil
	}
	st, err := api.ParseJobState(s)
	if err != nil {
		return "", err
	}
	return st, nil
}

// acctItem is one source of history records: a job (its runs) or an
// array's remainder of tasks that ended without running.
type acctItem struct {
	id  uint64
	job *api.Job
	rem *arrayJob
}

// history lists what f names and caller may see: pointers only, some 24
// bytes a job, so a history of 100,000 jobs is planned without copying
// any of it. The caller holds Server.mu (read is enough).
func (q *queue) history(f *api.AcctFilter, caller peer) []acctItem {
	var items []acctItem
	addJob := func(j *job) {
		if j != nil && (caller.UID == 0 || j.rec.Job.UID == caller.UID) {
			items = append(items, acctItem{id: j.rec.Job.ID, job: &j.rec.Job})
		}
	}
	addRem := func(a *arrayJob) {
		if r := a.remJob(); r != nil && r.State.Terminal() && (caller.UID == 0 || r.UID == caller.UID) {
			items = append(items, acctItem{id: remView(a).ID, rem: a})
		}
	}
	switch {
	case len(f.IDs)+len(f.Tasks) > 0:
		for _, id := range f.IDs {
			if a := q.array(id); a != nil {
				for pos := 0; pos < a.count; pos++ {
					addJob(q.job(a.base + uint64(pos)))
				}
				addRem(a)
			} else {
				addJob(q.job(id))
			}
		}
		for _, t := range f.Tasks {
			if a := q.array(t.JobID); a != nil {
				if id, ok := a.idOf(t.Task); ok {
					addJob(q.job(id))
				}
			}
		}
	default:
		for _, j := range q.jobs {
			addJob(j)
		}
		for _, a := range q.arrays {
			addRem(a)
		}
	}
	return items
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

// writeAcct sends the records of items that match f as a JSON array, by
// job ID then run, the bytes json.Marshal of the whole list would give.
// The records are made under the read lock a chunk of items at a time,
// as writeListing does, so the working set is one chunk, not the history.
func (s *Server) writeAcct(w http.ResponseWriter, items []acctItem, f *api.AcctFilter, caller peer) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.WriteByte('[')
	var recs []api.AcctRecord
	first := true
	for start := 0; start < len(items); start += listChunk {
		recs = recs[:0]
		s.mu.RLock()
		for _, it := range items[start:min(start+listChunk, len(items))] {
			switch {
			case it.job != nil:
				recs = append(recs, acctRecords(it.job)...)
			case it.rem.remJob() != nil && it.rem.remJob().State.Terminal(): // not purged since
				recs = append(recs, remRecord(it.rem))
			}
		}
		s.mu.RUnlock()
		for i := range recs {
			if !acctMatches(&recs[i], f, caller) {
				continue
			}
			b, err := json.Marshal(&recs[i])
			if err != nil {
				return // an api value always encodes
			}
			if !first {
				bw.WriteByte(',')
			}
			first = false
			if _, err := bw.Write(b); err != nil {
				return // the client is gone
			}
		}
	}
	bw.WriteString("]\n")
	bw.Flush()
}

func acctMatches(r *api.AcctRecord, f *api.AcctFilter, caller peer) bool {
	began := r.SubmitTime
	if r.StartTime != nil {
		began = *r.StartTime
	}
	return (caller.UID == 0 || r.UID == caller.UID) &&
		(len(f.Users) == 0 || slices.Contains(f.Users, r.User)) &&
		(len(f.States) == 0 || slices.Contains(f.States, r.State)) &&
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
		out = append(out, withGPUTime(withTimes(r), run.GPUs)) // gpus.go
	}
	if !j.State.Terminal() || j.EndTime == nil {
		return out
	}
	r := base
	r.Run, r.State, r.Signal, r.EndTime, r.Nodes, r.Message = len(j.Runs), j.State, j.Signal, *j.EndTime, j.Nodes, j.Message
	if j.ExitCode != nil {
		r.ExitCode = *j.ExitCode
	}
	r.StartTime = j.StartTime
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
	r := api.AcctRecord{JobID: v.ID, ArrayJobID: a.base, ArrayTasks: v.ArrayTasks, Name: v.Name, Partition: v.Partition,
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
