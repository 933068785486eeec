package priority

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Algorithm picks how usage and shares become a fairshare factor.
type Algorithm string

const (
	// FairTree ranks every user association: if account A is more
	// under-served than its sibling B, all of A's users rank above all of
	// B's. The factor is rank / number of users (Slurm's default).
	FairTree Algorithm = "fair_tree"
	// Classic is 2^(-U/S) with effective usage U and normalised shares S.
	Classic Algorithm = "classic"
)

// Account is a node of the share tree. Parent "" means the root.
type Account struct {
	Name   string  `json:"name"`
	Parent string  `json:"parent,omitempty"`
	Shares float64 `json:"shares,omitempty"` // 0 means the default, 1
}

// User places a user in an account with shares. A user may be in several
// accounts; the first listed is the user's default.
type User struct {
	Name    string  `json:"name"`
	Account string  `json:"account"`
	Shares  float64 `json:"shares,omitempty"` // 0 means the default, 1
}

// DefaultAccountName holds users that no account lists.
const DefaultAccountName = "default"

// Tree is the share hierarchy. It is immutable once built.
type Tree struct {
	accounts    map[string]Account
	members     map[Assoc]float64 // configured user shares
	defaultAcct map[string]string // user -> first configured account
	fallback    string            // account for users nobody placed
	// autoFallback: fallback was not configured; it takes part in share
	// computations only once it has users.
	autoFallback bool

	// Precomputed for build: accounts sorted by name, each one's parent
	// (-1 = root) and the configured associations in a fixed order.
	acctNames  []string
	acctIndex  map[string]int
	acctParent []int
	memberKeys []Assoc
}

// NewTree validates a configuration and builds the tree. Users no account
// lists go to fallback ("" means DefaultAccountName), created under the
// root if not configured.
func NewTree(accounts []Account, users []User, fallback string) (*Tree, error) {
	if fallback == "" {
		fallback = DefaultAccountName
	}
	t := &Tree{accounts: map[string]Account{},
		members: map[Assoc]float64{}, defaultAcct: map[string]string{}, fallback: fallback}
	for _, a := range accounts {
		switch {
		case a.Name == "":
			return nil, fmt.Errorf("share tree: an account has no name")
		case a.Shares < 0 || math.IsNaN(a.Shares) || math.IsInf(a.Shares, 0):
			return nil, fmt.Errorf("share tree: account %s has invalid shares %v", a.Name, a.Shares)
		case a.Name == a.Parent:
			return nil, fmt.Errorf("share tree: account %s is its own parent", a.Name)
		}
		if _, dup := t.accounts[a.Name]; dup {
			return nil, fmt.Errorf("share tree: account %s is defined twice", a.Name)
		}
		if a.Shares == 0 {
			a.Shares = 1
		}
		t.accounts[a.Name] = a
	}
	if _, ok := t.accounts[fallback]; !ok {
		t.accounts[fallback] = Account{Name: fallback, Shares: 1}
		t.autoFallback = true
	}
	for _, a := range t.accounts {
		if a.Parent != "" {
			if _, ok := t.accounts[a.Parent]; !ok {
				return nil, fmt.Errorf("share tree: account %s has unknown parent %s", a.Name, a.Parent)
			}
		}
		// Walk up: a cycle would never reach the root.
		seen := map[string]bool{}
		for p := a.Name; p != ""; p = t.accounts[p].Parent {
			if seen[p] {
				return nil, fmt.Errorf("share tree: accounts %s and its parents form a cycle", a.Name)
			}
			seen[p] = true
		}
	}
	for name := range t.accounts {
		t.acctNames = append(t.acctNames, name)
	}
	sort.Strings(t.acctNames)
	t.acctIndex = make(map[string]int, len(t.acctNames))
	for i, name := range t.acctNames {
		t.acctIndex[name] = i
	}
	for _, name := range t.acctNames {
		p := -1
		if parent := t.accounts[name].Parent; parent != "" {
			p = t.acctIndex[parent]
		}
		t.acctParent = append(t.acctParent, p)
	}
	for _, u := range users {
		switch {
		case u.Name == "":
			return nil, fmt.Errorf("share tree: a user has no name")
		case u.Shares < 0 || math.IsNaN(u.Shares) || math.IsInf(u.Shares, 0):
			return nil, fmt.Errorf("share tree: user %s has invalid shares %v", u.Name, u.Shares)
		}
		acct := u.Account
		if acct == "" {
			acct = fallback
		}
		if _, ok := t.accounts[acct]; !ok {
			return nil, fmt.Errorf("share tree: user %s is in unknown account %s", u.Name, acct)
		}
		k := Assoc{User: u.Name, Account: acct}
		if _, dup := t.members[k]; dup {
			return nil, fmt.Errorf("share tree: user %s is listed twice in account %s", u.Name, acct)
		}
		if u.Shares == 0 {
			u.Shares = 1
		}
		t.members[k] = u.Shares
		t.memberKeys = append(t.memberKeys, k)
		if _, ok := t.defaultAcct[u.Name]; !ok {
			t.defaultAcct[u.Name] = acct
		}
	}
	return t, nil
}

// Resolve returns the association a job of user in account charges:
// account "" is the user's default account; an unknown account is the
// fallback account.
func (t *Tree) Resolve(user, account string) Assoc {
	if account == "" {
		account = t.defaultAcct[user]
	}
	if _, ok := t.accounts[account]; !ok || account == "" {
		account = t.fallback
	}
	return Assoc{User: user, Account: account}
}

// Fairshares maps associations to their factor in [0, 1].
type Fairshares struct {
	tree    *Tree
	factors map[Assoc]float64
}

// Has reports whether the computation included the association a job of
// user in account charges.
func (f Fairshares) Has(user, account string) bool {
	if f.tree == nil {
		return false
	}
	_, ok := f.factors[f.tree.Resolve(user, account)]
	return ok
}

// Factor is the fairshare factor of a job of user in account; 0 for an
// association the computation did not include.
func (f Fairshares) Factor(user, account string) float64 {
	if f.tree == nil {
		return 0
	}
	return f.factors[f.tree.Resolve(user, account)]
}

// node is the share tree with usage, built per computation.
type node struct {
	name     string
	user     bool
	assoc    Assoc
	shares   float64
	usage    float64
	parent   *node
	children []*node
	levelFS  float64
}

// build assembles accounts and user associations (configured ones, those
// with usage and the extra ones asked for) with their decayed usage.
// Children are ordered users first (configured, extra, then from the
// ledger), then accounts by name: a fixed order for a given input, so sums
// are always added up the same way.
func (t *Tree) build(l *Ledger, at time.Time, extra []Assoc) (*node, []*node) {
	accts := make([]node, len(t.acctNames)+1) // 0 is the root
	root := &accts[0]
	for i, name := range t.acctNames {
		n := &accts[i+1]
		n.name, n.shares, n.parent = name, t.accounts[name].Shares, &accts[t.acctParent[i]+1]
	}
	size := len(t.memberKeys) + len(extra)
	if l != nil {
		size += len(l.keys)
	}
	leaves := make([]node, 0, size)
	index := make(map[Assoc]int, size)
	add := func(k Assoc) int {
		k = t.Resolve(k.User, k.Account)
		if i, ok := index[k]; ok {
			return i
		}
		shares, ok := t.members[k]
		if !ok {
			shares = 1
		}
		index[k] = len(leaves)
		leaves = append(leaves, node{name: k.User, user: true, assoc: k, shares: shares})
		return len(leaves) - 1
	}
	for _, k := range t.memberKeys {
		add(k)
	}
	for _, k := range extra {
		add(k)
	}
	if l != nil {
		for _, k := range l.keys {
			i := add(k)
			leaves[i].usage += l.Usage(k.User, k.Account, at)
		}
	}
	users := make([]*node, len(leaves))
	for i := range leaves {
		n := &leaves[i]
		n.parent = &accts[t.acctIndex[n.assoc.Account]+1]
		n.parent.children = append(n.parent.children, n)
		users[i] = n
	}
	for i := range t.acctNames {
		n := &accts[i+1]
		if t.autoFallback && n.name == t.fallback && len(n.children) == 0 {
			continue // an unused fallback holds no shares
		}
		n.parent.children = append(n.parent.children, n)
	}
	var sum func(n *node) float64
	sum = func(n *node) float64 {
		for _, c := range n.children {
			if !c.user {
				c.usage = sum(c)
			}
			n.usage += c.usage
		}
		return n.usage
	}
	sum(root)
	return root, users
}

// Fairshare computes every association's factor at time at. The users
// ranked are the configured ones, those with usage in l and extra (the
// owners of pending jobs, typically).
func (t *Tree) Fairshare(l *Ledger, at time.Time, extra []Assoc, alg Algorithm) Fairshares {
	root, users := t.build(l, at, extra)
	f := Fairshares{tree: t, factors: make(map[Assoc]float64, len(users))}
	if len(users) == 0 {
		return f
	}
	if alg == Classic {
		classic(root, f.factors)
	} else {
		fairTree(root, len(users), f.factors)
	}
	return f
}

// setLevelFS computes S/U for every node: S its shares over its siblings'
// (self included), U its usage over its parent's. No usage with shares is
// +Inf (most under-served); no shares is 0.
func setLevelFS(n *node) {
	total := 0.0
	for _, c := range n.children {
		total += c.shares
	}
	for _, c := range n.children {
		s, u := 0.0, 0.0
		if total > 0 {
			s = c.shares / total
		}
		if n.usage > 0 {
			u = c.usage / n.usage
		}
		switch {
		case s == 0:
			c.levelFS = 0
		case u == 0:
			c.levelFS = math.Inf(1)
		default:
			c.levelFS = s / u
		}
		setLevelFS(c)
	}
}

// fairTree ranks users depth first, most under-served first. Ties: sibling
// users with equal LevelFS share a rank; sibling accounts with equal
// LevelFS have their children merged before sorting; a user tied with a
// sibling account shares its rank with that account's first user.
func fairTree(root *node, nUsers int, out map[Assoc]float64) {
	setLevelFS(root)
	rank, rnt := nUsers, nUsers // rnt: the rank had there been no ties
	var walk func(sibs []*node, tiedIn bool)
	walk = func(sibs []*node, tiedIn bool) {
		slices.SortFunc(sibs, func(x, y *node) int {
			switch {
			case x.levelFS != y.levelFS:
				return cmp.Compare(y.levelFS, x.levelFS)
			case x.user != y.user:
				if x.user {
					return -1
				}
				return 1
			}
			// Order among equals changes no factor; it is fixed anyway.
			if c := strings.Compare(x.name, y.name); c != 0 {
				return c
			}
			return strings.Compare(x.assoc.Account, y.assoc.Account)
		})
		for i := 0; i < len(sibs); i++ {
			n := sibs[i]
			tied := (i == 0 && tiedIn) || (i > 0 && sibs[i-1].levelFS == n.levelFS)
			if n.user {
				if !tied {
					rank = rnt
				}
				out[n.assoc] = float64(rank) / float64(nUsers)
				rnt--
				continue
			}
			merged := append([]*node(nil), n.children...)
			for i+1 < len(sibs) && !sibs[i+1].user && sibs[i+1].levelFS == n.levelFS {
				i++
				merged = append(merged, sibs[i].children...)
			}
			walk(merged, tied)
		}
	}
	walk(append([]*node(nil), root.children...), false)
}

// classic is Slurm's original formula: F = 2^(-UE/S), with S the user's
// normalised shares (the product of share fractions down the tree) and UE
// the effective usage, which mixes in the parent account's:
// UE = U + (UE_parent - U) * shares/siblings' shares; UE = U at the top.
func classic(root *node, out map[Assoc]float64) {
	var walk func(n *node, normShares, parentUE float64, top bool)
	walk = func(n *node, normShares, parentUE float64, top bool) {
		total := 0.0
		for _, c := range n.children {
			total += c.shares
		}
		for _, c := range n.children {
			frac := 0.0
			if total > 0 {
				frac = c.shares / total
			}
			u := 0.0
			if root.usage > 0 {
				u = c.usage / root.usage
			}
			ue := u
			if !top {
				ue = u + (parentUE-u)*frac
			}
			s := normShares * frac
			if c.user {
				if s > 0 {
					out[c.assoc] = math.Exp2(-ue / s)
				} else {
					out[c.assoc] = 0
				}
				continue
			}
			walk(c, s, ue, false)
		}
	}
	walk(root, 1, 0, true)
}
