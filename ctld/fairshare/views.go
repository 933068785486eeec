package fairshare

import (
	"cmp"
	"slices"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/priority"
)

// What corral prio (sprio) and corral share (sshare) show, computed
// afresh from the ledger; the controller serves them.

// Pending is a pending job as corral prio lists it: View is how listings
// show it, Job what its priority is computed from (an array's remainder
// for its tasks that have not started). Both point into the caller's
// records or views, never copied: with 100,000 pending jobs, copying each
// for every `corral prio` (and every dashboard page) cost 100 MB.
type Pending struct {
	View *api.Job
	Job  *api.Job
}

// Prio computes the priority of every eligible pending job that filter
// matches afresh at now, against a cluster of size cl; pending may come
// in any order (and hold only the jobs asked for), the answer is in ID
// order. owners are the owners of every pending job, each once: the
// fairshare tree ranks them all.
func (f *State) Prio(pending []Pending, owners []priority.Job, cl priority.Cluster, filter api.PrioFilter, now time.Time) api.PrioResponse {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := cycleShares{at: now, cl: cl, owners: owners}
	c.fs = f.calc.Fairshares(f.ledger, now, c.owners)
	w := f.weights
	resp := api.PrioResponse{Weights: api.PrioWeights{Age: w.Age, Fairshare: w.Fairshare, JobSize: w.Size}, Jobs: []api.JobPrio{}}
	factor := func(x priority.Factor) api.PrioFactor {
		return api.PrioFactor{Value: x.Value, Weight: x.Weight, Part: x.Part}
	}
	ids := make(map[uint64]bool, len(filter.IDs)) // the dashboard asks for 200 of 100,000
	for _, id := range filter.IDs {
		ids[id] = true
	}
	for _, e := range pending {
		v := e.View
		if len(filter.Users) > 0 && !slices.Contains(filter.Users, v.User) {
			continue
		}
		if len(ids) > 0 && !ids[v.ID] && (v.ArrayJobID == 0 || !ids[v.ArrayJobID]) {
			continue
		}
		// As Slurm's sprio: only jobs that could start, not those a hold,
		// a begin time or a dependency keeps (their priority is not in
		// play, and their age does not grow).
		if f.eligibleAt(e.Job, now).IsZero() {
			continue
		}
		b := f.breakdown(e.Job, &c, now)
		resp.Jobs = append(resp.Jobs, api.JobPrio{
			JobID: v.ID, Job: api.JobRefText(v), Partition: v.Partition, User: v.User,
			Account:  f.calc.Tree().Resolve(v.User, v.Spec.Account).Account,
			Priority: b.Priority - int64(v.Spec.Nice), Nice: v.Spec.Nice,
			Age: factor(b.Age), Fairshare: factor(b.Fairshare), JobSize: factor(b.Size),
		})
	}
	slices.SortFunc(resp.Jobs, func(a, b api.JobPrio) int { return cmp.Compare(a.JobID, b.JobID) })
	return resp
}

// shareNode is one account or user association of the share tree.
type shareNode struct {
	row      api.ShareRow
	children []*shareNode // users first, then accounts, each by name
}

// Share is sshare's view of the account tree at now: every configured
// account and user, every user with usage, and the owners of pending jobs;
// users, when any, keep only their rows and the accounts'.
func (f *State) Share(owners []priority.Job, users []string, now time.Time) api.ShareResponse {
	f.mu.Lock()
	defer f.mu.Unlock()
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
		n := &shareNode{row: api.ShareRow{Account: k.Account, User: k.User, Parent: k.Account, RawShares: shares,
			Default: tree.Resolve(k.User, "").Account == k.Account}}
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
	resp := api.ShareResponse{Algorithm: string(f.algorithm), Time: now, Rows: []api.ShareRow{}, DefaultAccount: f.fallback}
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
