package api

// refBatches splits job references into requests of at most
// MaxRefsPerRequest, which is all the controller takes at once: Cancel
// and Control send one request per batch, so a caller may still name
// as many jobs as it likes.
func refBatches(ids []uint64, tasks []TaskRef) []JobsRequest {
	if len(ids)+len(tasks) <= MaxRefsPerRequest {
		return []JobsRequest{{IDs: ids, Tasks: tasks}}
	}
	var out []JobsRequest
	for len(ids) > 0 {
		n := min(len(ids), MaxRefsPerRequest)
		out = append(out, JobsRequest{IDs: ids[:n]})
		ids = ids[n:]
	}
	for len(tasks) > 0 {
		n := min(len(tasks), MaxRefsPerRequest)
		out = append(out, JobsRequest{Tasks: tasks[:n]})
		tasks = tasks[n:]
	}
	return out
}

// add merges the answer to another batch of the same request into r.
func (r *CancelResponse) add(o *CancelResponse) {
	r.Cancelled = append(r.Cancelled, o.Cancelled...)
	r.CancelledCount += o.CancelledCount
	r.ErrorCount += o.ErrorCount
	r.Gone = append(r.Gone, o.Gone...)
	r.GoneCount += o.GoneCount
	for id, msg := range o.Errors {
		if r.Errors == nil {
			r.Errors = make(map[uint64]string)
		}
		r.Errors[id] = msg
	}
}

// add merges the answer to another batch of the same request into r.
func (r *JobsResponse) add(o *JobsResponse) {
	r.Done = append(r.Done, o.Done...)
	r.ErrorCount += o.ErrorCount
	for ref, msg := range o.Errors {
		if r.Errors == nil {
			r.Errors = make(map[string]string)
		}
		r.Errors[ref] = msg
	}
}
