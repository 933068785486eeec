package priority

import "time"

// ShareRow is one line of an sshare-style report: an account or a user
// association, with its shares, usage and fairshare.
type ShareRow struct {
	Account string `json:"account"`
	User    string `json:"user,omitempty"` // "" for an account row
	Depth   int    `json:"depth"`          // 0 for the root's children
	// RawShares as configured; NormShares is the fraction of the parent's
	// shares (siblings included).
	RawShares  float64 `json:"raw_shares"`
	NormShares float64 `json:"norm_shares"`
	// RawUsage is decayed billing-seconds (an account's is the sum of its
	// subtree's); NormUsage is the fraction of the parent's usage.
	RawUsage  float64 `json:"raw_usage"`
	NormUsage float64 `json:"norm_usage"`
	// LevelFS is Fair Tree's NormShares / NormUsage (+Inf without usage).
	LevelFS float64 `json:"level_fs"`
	// Fairshare is the user's factor under alg; 0 on account rows.
	Fairshare float64 `json:"fairshare"`
}

// Report lists the tree depth first, accounts before their children, with
// usage at time at: what `corral share` prints. Users are those Fairshare
// would rank (configured, with usage, or in extra).
func (t *Tree) Report(l *Ledger, at time.Time, extra []Assoc, alg Algorithm) []ShareRow {
	fs := t.Fairshare(l, at, extra, alg)
	root, _ := t.build(l, at, extra)
	setLevelFS(root)
	var rows []ShareRow
	var walk func(n *node, depth int)
	walk = func(n *node, depth int) {
		total := 0.0
		for _, c := range n.children {
			total += c.shares
		}
		for _, c := range n.children {
			r := ShareRow{Depth: depth, RawShares: c.shares, RawUsage: c.usage, LevelFS: c.levelFS}
			if total > 0 {
				r.NormShares = c.shares / total
			}
			if n.usage > 0 {
				r.NormUsage = c.usage / n.usage
			}
			if c.user {
				r.Account, r.User = c.assoc.Account, c.assoc.User
				r.Fairshare = fs.factors[c.assoc]
				rows = append(rows, r)
				continue
			}
			r.Account = c.name
			rows = append(rows, r)
			walk(c, depth+1)
		}
	}
	walk(root, 0)
	return rows
}
