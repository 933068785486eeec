package ctld

import (
	"bufio"
	"cmp"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

// jobView is how much of each job a listing sends (GET /v1/jobs?view=):
//   - full (the default): the whole api.Job;
//   - summary: every field but the spec (script, environment) and the
//     history, which are most of a record's bytes; what `corral queue
//     --json` prints (`corral show job --json` has everything);
//   - brief: only what the `corral queue` table shows (api.JobBrief), about a
//     fifth of the bytes, so the commonest big listing is cheap.
type jobView int

const (
	viewFull jobView = iota
	viewSummary
	viewBrief
)

// ViewBrief and ViewSummary are the view parameter's values.
const (
	ViewBrief   = "brief"
	ViewSummary = "summary"
)

// listView reads and removes the view parameter.
func listView(q url.Values) (jobView, error) {
	vals, ok := q["view"]
	if !ok {
		return viewFull, nil
	}
	delete(q, "view")
	if len(vals) == 1 {
		switch vals[0] {
		case ViewBrief:
			return viewBrief, nil
		case ViewSummary:
			return viewSummary, nil
		case "full":
			return viewFull, nil
		}
	}
	return viewFull, fault.Errorf(fault.Invalid, "invalid view=%q: use brief, summary or full", strings.Join(vals, ","))
}

// summaryJob is api.Job without its spec and history: the outer fields
// shadow the embedded ones and, nil, are left out.
type summaryJob struct {
	*api.Job
	Spec    *struct{} `json:"spec,omitempty"`
	History *struct{} `json:"history,omitempty"`
}

// listing is a planned job listing: the matching records, by pointer, and
// the array views (copies: they are built, not stored), each in ID order
// and each ID once. Records are read, under the read lock, only as they
// are sent (writeListing), a chunk at a time: a listing of 100,000 jobs
// no longer holds a copy of every job (a kilobyte each) nor blocks
// changes while it is encoded.
type listing struct {
	recs  []*api.Job
	views []api.Job
	match func(*api.Job) bool // checked again on each copy: records change
}

func byID(a, b *api.Job) int { return cmp.Compare(a.ID, b.ID) }

func newListing(recs []*api.Job, views []api.Job, match func(*api.Job) bool) listing {
	slices.SortFunc(recs, byID)
	recs = slices.CompactFunc(recs, func(a, b *api.Job) bool { return a.ID == b.ID })
	slices.SortFunc(views, func(a, b api.Job) int { return byID(&a, &b) })
	views = slices.CompactFunc(views, func(a, b api.Job) bool { return a.ID == b.ID })
	// A record and a view of one ID: the record is the job.
	views = slices.DeleteFunc(views, func(v api.Job) bool {
		_, found := slices.BinarySearchFunc(recs, v.ID, func(r *api.Job, id uint64) int { return cmp.Compare(r.ID, id) })
		return found
	})
	return listing{recs: recs, views: views, match: match}
}

// listChunk is how many records writeListing copies per read lock.
const listChunk = 1024

// writeListing sends l as a JSON array of api.Job (or of api.JobBrief), in ID
// order, keeping only the jobs caller may see (all of them, or their own:
// Gate.SeesAll).
func (s *Server) writeListing(w http.ResponseWriter, caller peer, l listing, view jobView) {
	all := s.gate.SeesAll(caller.caller())
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 256<<10)
	enc := json.NewEncoder(bw)
	bw.WriteByte('[')
	first := true
	emit := func(j *api.Job) error {
		if !all && j.UID != caller.UID {
			return nil
		}
		if !first {
			bw.WriteByte(',')
		}
		first = false
		switch view {
		case viewBrief:
			b := api.BriefOf(j)
			return enc.Encode(&b)
		case viewSummary:
			return enc.Encode(summaryJob{Job: j})
		}
		return enc.Encode(j)
	}
	buf := make([]api.Job, 0, min(listChunk, len(l.recs)))
	v := 0
	for start := 0; start < len(l.recs); start += listChunk {
		buf = buf[:0]
		s.mu.RLock()
		for _, r := range l.recs[start:min(start+listChunk, len(l.recs))] {
			if l.match(r) {
				buf = append(buf, *r)
			}
		}
		s.mu.RUnlock()
		for i := range buf {
			for ; v < len(l.views) && l.views[v].ID < buf[i].ID; v++ {
				emit(&l.views[v])
			}
			// An api value always encodes: an error is the client gone.
			if emit(&buf[i]) != nil {
				return
			}
		}
	}
	for ; v < len(l.views); v++ {
		emit(&l.views[v])
	}
	bw.WriteString("]\n")
	bw.Flush()
}
