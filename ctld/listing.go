package ctld

import (
	"cmp"
	"slices"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/ctld/internal/lockorder"
)

// jobMatcher is which jobs a listing with filter f shows, and whether
// finished ones can be among them. A listing of unfinished jobs shows
// the finished ones still COMPLETING too, as squeue does.
func jobMatcher(f api.JobFilter) (match func(*api.Job) bool, includeFinished bool) {
	includeFinished = f.All || len(f.IDs)+len(f.Tasks) > 0 || slices.ContainsFunc(f.States, api.JobState.Terminal)
	shown := stateShown(f, includeFinished)
	if f.WithSteps { // and, for a finished one, queue.withSteps
		shown = func(st api.JobState) bool { return st == api.StateRunning || st.Terminal() }
	}
	completing := len(f.States) == 0 && !f.WithSteps || f.Completing
	match = func(j *api.Job) bool {
		if len(f.Users) > 0 && !slices.Contains(f.Users, j.User) {
			return false
		}
		if endedBefore(j, f.EndedSince) {
			return false
		}
		return shown(j.State) || completing && j.Completing
	}
	return match, includeFinished
}

// endedBefore reports whether j finished before t (never for a zero t):
// such a job is left out of a listing with EndedSince t. One still
// completing is not finished yet.
func endedBefore(j *api.Job, t time.Time) bool {
	return !t.IsZero() && j.State.Terminal() && !j.Completing && j.EndTime != nil && j.EndTime.Before(t)
}

// stateShown is which states a listing with filter f shows: those named,
// or every unfinished one and, with includeFinished, the finished ones;
// none when it names only the COMPLETING jobs (completing=1 alone).
func stateShown(f api.JobFilter, includeFinished bool) func(api.JobState) bool {
	return func(st api.JobState) bool {
		switch {
		case len(f.States) > 0:
			return slices.Contains(f.States, st)
		case f.Completing:
			return false
		}
		return includeFinished || !st.Terminal()
	}
}

// list yields the records a listing shows, by pointer, and returns its
// array entries (views). The caller holds Server.mu (read is enough).
func (q *queue) list(f api.JobFilter, match func(*api.Job) bool, includeFinished bool, yield func(*api.Job)) (views []api.Job) {
	// Pointers are handed out; the jobs are copied a chunk at a time as
	// they are sent (or only those a page shows): copying, appending and
	// sorting 100,000 api.Job values took seconds and a copy of every job
	// in memory.
	switch {
	case len(f.IDs)+len(f.Tasks) > 0:
		for _, id := range f.IDs {
			if j := q.job(id); j != nil && match(&j.rec.Job) {
				yield(&j.rec.Job)
			}
		}
	case includeFinished:
		for _, j := range q.jobs {
			if match(&j.rec.Job) {
				yield(&j.rec.Job)
			}
		}
	default:
		for _, j := range q.active {
			if match(&j.rec.Job) {
				yield(&j.rec.Job)
			}
		}
		for _, j := range q.completing {
			if j.state().Terminal() && match(&j.rec.Job) { // a requeued one is in active
				yield(&j.rec.Job)
			}
		}
		if f.WithSteps {
			for _, j := range q.closing {
				if match(&j.rec.Job) {
					yield(&j.rec.Job)
				}
			}
		}
	}
	return q.appendArrayViews(nil, f, includeFinished, match)
}

// withSteps narrows match to the jobs whose steps run: running ones, and
// finished ones whose steps wait for their nodes' reports (q.closing).
// The caller holds Server.mu (read is enough) when it calls the result.
func (q *queue) withSteps(match func(*api.Job) bool) func(*api.Job) bool {
	return func(j *api.Job) bool {
		return match(j) && (j.State == api.StateRunning || q.closing[j.ID] != nil)
	}
}

func compareIDs(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// listJobs plans the listing of what f names that caller may see: their
// own jobs, or everyone's for operators and up and with SharedView=YES.
func (s *Server) listJobs(caller peer, f api.JobFilter) *listing {
	match, includeFinished := jobMatcher(f)
	if f.WithSteps {
		match = s.q.withSteps(match)
	}
	all, uid := s.gate.SeesAll(caller.caller()), caller.UID
	l := &listing{mu: &s.mu, match: match, visible: func(j *api.Job) bool { return all || j.UID == uid },
		plan: func(yield func(*api.Job)) []api.Job { return s.q.list(f, match, includeFinished, yield) }}
	if len(f.IDs)+len(f.Tasks)+len(f.Users) == 0 && !f.WithSteps && f.EndedSince.IsZero() {
		// Which jobs it shows depends on their owner and state alone: a
		// page reads the queue's lists by state (pageIndexed).
		l.byState = &statePage{q: s.q, uid: uid, everyone: all, state: stateShown(f, includeFinished),
			views: func() []api.Job { return s.q.appendArrayViews(nil, f, includeFinished, match) }}
	}
	return l
}

// jobView is one job, by its ID or as an array task 123_4 (a task that
// has not started is shown as it would run), if caller may see it.
func (s *Server) jobView(caller peer, ref jobRef) (api.Job, error) {
	s.mu.RLock()
	out, msg := s.q.view(ref)
	if j := s.q.job(out.ID); msg == "" && j != nil {
		out.Steps = runningStepsLocked(j) // only a show lists them: listings stay lean
	}
	s.mu.RUnlock()
	if msg != "" {
		return api.Job{}, fault.Errorf(fault.NotFound, "%s", msg)
	}
	if !s.gate.MayView(caller.caller(), out.UID) {
		return api.Job{}, fault.Errorf(fault.Forbidden, "job %s belongs to %s: you may see only your own jobs", ref, out.User)
	}
	return out, nil
}

// listing is a job listing: its plan walks the matching records (under
// the read lock) and gives the array views (copies: they are built, not
// stored). A listing sent whole collects the records' pointers once and
// puts records and views in ID order, each ID once (order); records are
// then copied, under the read lock, only as they are sent, a chunk at a
// time (next): a listing of 100,000 jobs does not hold a copy of every
// job (a kilobyte each) nor block changes while it is encoded. A page
// (page) walks the records once and copies only the jobs it shows.
type listing struct {
	mu      *lockorder.RWMutex[lockorder.Server] // Server.mu, read while records are walked or copied
	plan    func(yield func(*api.Job)) []api.Job
	recs    []*api.Job
	views   []api.Job
	ordered bool                // recs and views are collected, sorted and each ID is there once (order)
	match   func(*api.Job) bool // checked again on each copy: records change
	visible func(*api.Job) bool // the caller may see the job
	rec     int                 // next record to copy
	view    int                 // next view to send
	copies  []api.Job           // the chunk of records next copied
	out     []*api.Job          // what next hands out
	byState *statePage          // set: page reads the queue's stateIndex
}

func byID(a, b *api.Job) int { return cmp.Compare(a.ID, b.ID) }

// order collects l's records and views, sorts them by ID, once, and
// keeps each ID once. Only a listing sent whole needs it.
func (l *listing) order() {
	if l.ordered {
		return
	}
	l.ordered = true
	var recs []*api.Job
	l.mu.RLock()
	views := l.plan(func(j *api.Job) { recs = append(recs, j) })
	l.mu.RUnlock()
	slices.SortFunc(recs, byID)
	recs = slices.CompactFunc(recs, func(a, b *api.Job) bool { return a.ID == b.ID })
	slices.SortFunc(views, func(a, b api.Job) int { return byID(&a, &b) })
	views = slices.CompactFunc(views, func(a, b api.Job) bool { return a.ID == b.ID })
	// A record and a view of one ID: the record is the job.
	l.views = slices.DeleteFunc(views, func(v api.Job) bool {
		_, found := slices.BinarySearchFunc(recs, v.ID, func(r *api.Job, id uint64) int { return cmp.Compare(r.ID, id) })
		return found
	})
	l.recs = recs
}

// listChunk is how many records a listing copies per read lock.
const listChunk = 1024

// done reports whether every job of l has been handed out.
func (l *listing) done() bool {
	l.order()
	return l.rec >= len(l.recs) && l.view >= len(l.views)
}

// next is the next chunk of l's jobs the caller may see, in ID order: up
// to listChunk records, copied under the read lock, with the array views
// between them, and the views left once the records are out. The jobs
// are valid until the next call.
func (l *listing) next() []*api.Job {
	l.order()
	l.copies = l.copies[:0]
	end := min(l.rec+listChunk, len(l.recs))
	l.mu.RLock()
	for _, r := range l.recs[l.rec:end] {
		if l.match(r) {
			l.copies = append(l.copies, *r)
		}
	}
	l.mu.RUnlock()
	l.rec = end
	l.out = l.out[:0]
	add := func(j *api.Job) {
		if l.visible(j) {
			l.out = append(l.out, j)
		}
	}
	for i := range l.copies {
		for ; l.view < len(l.views) && l.views[l.view].ID < l.copies[i].ID; l.view++ {
			add(&l.views[l.view])
		}
		add(&l.copies[i])
	}
	if l.rec >= len(l.recs) {
		for ; l.view < len(l.views); l.view++ {
			add(&l.views[l.view])
		}
	}
	return l.out
}

// page is the newest limit jobs of each state in l that the caller may
// see, newest first, with how many of each state there are
// (api.JobPage). The records are walked, checked and counted under one
// read lock, and only the jobs shown are copied, so a page of a
// 100,000-job queue costs one walk over pointers, not 100,000 copies to
// encode. l must hold each job once: a listing by state or owner, not by
// ID.
func (l *listing) page(limit int) api.JobPage {
	if l.byState != nil {
		return l.pageIndexed(limit)
	}
	var states []statePick
	pick := func(j *api.Job) { // the plan matched it
		if !l.visible(j) {
			return
		}
		i := slices.IndexFunc(states, func(p statePick) bool { return p.state == j.State })
		if i < 0 {
			states = append(states, statePick{state: j.State})
			i = len(states) - 1
		}
		states[i].add(j, limit)
	}
	out := api.JobPage{Jobs: []api.Job{}, Counts: map[api.JobState]int{}}
	l.mu.RLock()
	views := l.plan(pick)
	for i := range views {
		pick(&views[i])
	}
	fillPage(&out, states, limit)
	l.mu.RUnlock()
	slices.SortFunc(out.Jobs, func(a, b api.Job) int { return cmp.Compare(b.ID, a.ID) })
	return out
}

// fillPage puts each state's count and its newest limit jobs into out;
// the caller holds the listing's lock (the jobs are the queue's).
func fillPage(out *api.JobPage, states []statePick, limit int) {
	for i := range states {
		p := &states[i]
		out.Counts[p.state] = p.n
		for _, j := range p.newest(limit) {
			out.Jobs = append(out.Jobs, *j)
		}
	}
}

// statePick is one state's part of a page: how many jobs it has, and the
// newest of those seen so far.
type statePick struct {
	state api.JobState
	n     int
	top   []*api.Job // the newest limit seen are among these (at most 2 x limit)
}

// add counts j and keeps it if it may be among the newest: trimming
// only when twice the limit piled up keeps the walk O(jobs x log limit).
func (p *statePick) add(j *api.Job, limit int) {
	p.n++
	p.top = append(p.top, j)
	if len(p.top) >= 2*limit {
		p.newest(limit)
	}
}

// newest trims p's kept jobs to the limit of highest ID, highest first.
func (p *statePick) newest(limit int) []*api.Job {
	slices.SortFunc(p.top, func(a, b *api.Job) int { return cmp.Compare(b.ID, a.ID) })
	p.top = p.top[:min(limit, len(p.top))]
	return p.top
}
