package ctld

import (
	"fmt"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

// tooManyRefs refuses a request naming more than api.MaxRefsPerRequest
// jobs (or nodes: what).
func tooManyRefs(action string, n int, what string) error {
	if n <= api.MaxRefsPerRequest {
		return nil
	}
	return fault.Errorf(fault.Invalid, "%s: more than %d %s in one request; send them in batches, as the corral CLI does",
		action, api.MaxRefsPerRequest, what)
}

// refusals are why jobs were not acted on, by key: the first
// api.MaxListedErrors are kept, all are counted, so an answer stays small
// however many jobs a request or a filter reaches.
type refusals[K interface{ ~uint64 | ~string }] struct {
	list  map[K]string
	count int
	gone  []K // the listed refusals of jobs that do not exist or had ended
	// goneCount counts all of those.
	goneCount int
}

func newRefusals[K interface{ ~uint64 | ~string }]() *refusals[K] {
	return &refusals[K]{list: make(map[K]string)}
}

// add records a refusal; a key refused twice counts once while listed.
func (r *refusals[K]) add(key K, format string, args ...any) {
	if _, dup := r.list[key]; dup {
		return
	}
	r.count++
	if len(r.list) < api.MaxListedErrors {
		r.list[key] = fmt.Sprintf(format, args...)
	}
}

// addGone records a refusal of a job that does not exist or had already
// ended: a cancel reports these apart, as Slurm's scancel ignores them.
func (r *refusals[K]) addGone(key K, format string, args ...any) {
	if _, dup := r.list[key]; dup {
		return
	}
	r.add(key, format, args...)
	r.goneCount++
	if _, listed := r.list[key]; listed {
		r.gone = append(r.gone, key)
	}
}

// listed is the map an answer carries: nil when there is none.
func (r *refusals[K]) listed() map[K]string {
	if len(r.list) == 0 {
		return nil
	}
	return r.list
}
