package ctld

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/priority"
)

// The user-plane views of multifactor priority: GET /v1/prio (corral prio,
// sprio's view of pending jobs' factors) and GET /v1/share (corral share,
// sshare's view of the account tree's usage and fairshare).

// schedulingRoutes adds the priority endpoints to the user plane.
func (s *Server) schedulingRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/prio", s.withCaller(s.handlePrio))
	mux.HandleFunc("GET /v1/share", s.withCaller(s.handleShare))
}

// handlePrio serves GET /v1/prio?user=&id= (repeatable or comma lists).
func (s *Server) handlePrio(w http.ResponseWriter, r *http.Request, _ peer) {
	var f api.PrioFilter
	for key, vals := range r.URL.Query() {
		for _, v := range splitList(vals) {
			switch key {
			case "user":
				f.Users = append(f.Users, v)
			case "id":
				id, err := strconv.ParseUint(v, 10, 64)
				if err != nil || id == 0 {
					writeError(w, errorf(http.StatusBadRequest, "invalid job id %q: use a positive number", v))
					return
				}
				f.IDs = append(f.IDs, id)
			default:
				writeError(w, errorf(http.StatusBadRequest, "unknown query parameter %q (valid: user, id)", key))
				return
			}
		}
	}
	writeJSON(w, http.StatusOK, s.prio(f, time.Now()))
}

// pendingEntry is a pending job as prio lists it: view is how listings
// show it, job what its priority is computed from (an array's remainder
// for its tasks that have not started).
type pendingEntry struct {
	view api.Job
	job  *api.Job
}

// pendingEntriesLocked lists pending jobs and array remainders. s.mu is
// held (read is enough).
func (s *Server) pendingEntriesLocked() []pendingEntry {
	var out []pendingEntry
	for _, j := range s.active {
		if j.state() == api.StatePending {
			out = append(out, pendingEntry{view: j.rec.Job, job: &j.rec.Job})
		}
	}
	for _, a := range s.pipe.arrays {
		if a.rem != nil && a.remCount > 0 && a.rem.Job.State == api.StatePending {
			out = append(out, pendingEntry{view: remView(a), job: &a.rem.Job})
		}
	}
	slices.SortFunc(out, func(a, b pendingEntry) int { return cmp.Compare(a.view.ID, b.view.ID) })
	return out
}

// prio computes every matching pending job's priority afresh at now.
func (s *Server) prio(filter api.PrioFilter, now time.Time) api.PrioResponse {
	s.mu.RLock()
	defer s.mu.RUnlock()
	f := s.fs
	f.mu.Lock()
	defer f.mu.Unlock()
	entries := s.pendingEntriesLocked()
	c := cycleShares{at: now, cl: s.clusterSizeLocked()}
	for _, e := range entries {
		c.owners = append(c.owners, priority.Job{User: e.job.User, Account: e.job.Spec.Account})
	}
	c.fs = f.calc.Fairshares(f.ledger, now, c.owners)
	w := f.weights
	resp := api.PrioResponse{Weights: api.PrioWeights{Age: w.Age, Fairshare: w.Fairshare, JobSize: w.Size}, Jobs: []api.JobPrio{}}
	factor := func(x priority.Factor) api.PrioFactor {
		return api.PrioFactor{Value: x.Value, Weight: x.Weight, Part: x.Part}
	}
	for _, e := range entries {
		v := &e.view
		if len(filter.Users) > 0 && !slices.Contains(filter.Users, v.User) {
			continue
		}
		if len(filter.IDs) > 0 && !slices.Contains(filter.IDs, v.ID) &&
			(v.ArrayJobID == 0 || !slices.Contains(filter.IDs, v.ArrayJobID)) {
			continue
		}
		b := f.breakdown(e.job, &c, now)
		resp.Jobs = append(resp.Jobs, api.JobPrio{
			JobID: v.ID, Job: api.JobRefText(v), Partition: v.Partition, User: v.User,
			Account:  f.calc.Tree().Resolve(v.User, v.Spec.Account).Account,
			Priority: b.Priority - int64(v.Spec.Nice), Nice: v.Spec.Nice,
			Age: factor(b.Age), Fairshare: factor(b.Fairshare), JobSize: factor(b.Size),
		})
	}
	return resp
}

func (s *Server) handleShare(w http.ResponseWriter, r *http.Request, _ peer) {
	var users []string
	for key, vals := range r.URL.Query() {
		if key != "user" {
			writeError(w, errorf(http.StatusBadRequest, "unknown query parameter %q (valid: user)", key))
			return
		}
		users = append(users, splitList(vals)...)
	}
	writeJSON(w, http.StatusOK, s.share(users, time.Now()))
}

// shareNode is one account or user association of the share tree.
type shareNode struct {
	row      api.ShareRow
	children []*shareNode // users first, then accounts, each by name
}

// share builds sshare's view of the tree at now: every configured
// account and user, and every user with usage or a pending job.
func (s *Server) share(users []string, now time.Time) api.ShareResponse {
	s.mu.RLock()
	var owners []priority.Job
	for _, e := range s.pendingEntriesLocked() {
		owners = append(owners, priority.Job{User: e.job.User, Account: e.job.Spec.Account})
	}
	f := s.fs
	f.mu.Lock() // lock order: s.mu, then f.mu
	defer f.mu.Unlock()
	s.mu.RUnlock()
	tree := f.calc.Tree()
	fs := f.calc.Fairshares(f.ledger, now, owners)

	root := &shareNode{row: api.ShareRow{Account: "root", RawShares: 1, NormShares: 1}}
	accounts := map[string]*shareNode{}
	for _, a := range f.shareAccounts {
		accounts[a.Name] = &shareNode{row: api.ShareRow{Account: a.Name, Parent: a.Parent, RawShares: sharesOr1(a.Shares)}}
	}
	if accounts[f.fallback] == nil {
		accounts[f.fallback] = &shareNode{row: api.ShareRow{Account: f.fallback, RawShares: 1}}
	}
	assocs := map[priority.Assoc]*shareNode{}
	addUser := func(k priority.Assoc, shares float64) *shareNode {
		k = tree.Resolve(k.User, k.Account)
		if n := assocs[k]; n != nil {
			return n
		}
		n := &shareNode{row: api.ShareRow{Account: k.Account, User: k.User, Parent: k.Account, RawShares: shares}}
		factor := fs.Factor(k.User, k.Account)
		n.row.FairShare = &factor
		assocs[k] = n
		accounts[k.Account].children = append(accounts[k.Account].children, n)
		return n
	}
	for _, u := range f.shareUsers {
		addUser(priority.Assoc{User: u.Name, Account: u.Account}, sharesOr1(u.Shares))
	}
	for _, o := range owners {
		addUser(priority.Assoc{User: o.User, Account: o.Account}, 1)
	}
	for _, k := range f.ledger.Assocs() {
		addUser(k, 1).row.RawUsage += f.ledger.Usage(k.User, k.Account, now)
	}
	for _, n := range accounts {
		if n.row.Account == f.fallback && !f.fallbackConfigured && len(n.children) == 0 {
			continue // an unused default account holds no shares (as in package priority)
		}
		parent := root
		if n.row.Parent != "" {
			parent = accounts[n.row.Parent]
		}
		parent.children = append(parent.children, n)
	}
	var walk func(n *shareNode, depth int) float64
	walk = func(n *shareNode, depth int) float64 {
		n.row.Depth = depth
		slices.SortFunc(n.children, func(a, b *shareNode) int {
			if (a.row.User == "") != (b.row.User == "") {
				if a.row.User != "" {
					return -1
				}
				return 1
			}
			return cmp.Or(cmp.Compare(a.row.User, b.row.User), cmp.Compare(a.row.Account, b.row.Account))
		})
		total := 0.0
		for _, c := range n.children {
			total += c.row.RawShares
		}
		for _, c := range n.children {
			if total > 0 {
				c.row.NormShares = n.row.NormShares * c.row.RawShares / total
			}
			if c.row.User == "" {
				c.row.RawUsage = walk(c, depth+1)
			} else {
				c.row.Depth = depth + 1
			}
			n.row.RawUsage += c.row.RawUsage
		}
		return n.row.RawUsage
	}
	walk(root, 0)
	resp := api.ShareResponse{Algorithm: string(f.algorithm), Time: now, Rows: []api.ShareRow{}}
	var emit func(n *shareNode)
	emit = func(n *shareNode) {
		if root.row.RawUsage > 0 {
			n.row.EffectvUsage = n.row.RawUsage / root.row.RawUsage
		}
		if n.row.User == "" || len(users) == 0 || slices.Contains(users, n.row.User) {
			resp.Rows = append(resp.Rows, n.row)
		}
		for _, c := range n.children {
			emit(c)
		}
	}
	emit(root)
	return resp
}

func sharesOr1(v float64) float64 {
	if v <= 0 {
		return 1
	}
	return v
}
