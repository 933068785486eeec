package fairshare

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/config"
	"github.com/corral-hpc/corral/ctld/internal/lockorder"
	"github.com/corral-hpc/corral/priority"
)

// SaveInterval: the controller saves the ledger at most this often, and
// at shutdown; a crash re-charges the rest from the job records.
const SaveInterval = 5 * time.Second

// pruneBelow: associations whose decayed usage falls below this many
// billing-seconds are forgotten at a save, so the ledger does not grow
// without bound.
const pruneBelow = 1e-6

// Rules are the controller's rules that accounting applies but does not
// own.
type Rules struct {
	// PhysicalGPUs is how many physical GPUs a run of job on nodes nodes
	// holds (billing counts them).
	PhysicalGPUs func(job *api.Job, nodes int) float64
	// HeldOrEarly says whether a hold or a begin time still ahead keeps
	// job from being eligible at now.
	HeldOrEarly func(job *api.Job, now time.Time) bool
}

// State is the controller's priority state: the calculator built from
// the configuration, the usage ledger, and when pending jobs became
// eligible.
type State struct {
	calc  *priority.Calculator // PriorityType=basic: built with zero weights
	rules Rules
	// accounts are the accounts jobs may name; members, per configured
	// user, the accounts they may use (their default first). A user
	// nobody configured may use only the default account.
	accounts map[string]bool
	members  map[string][]string
	fallback string
	// What corral share and prio show of the configuration.
	weights            priority.Weights
	algorithm          priority.Algorithm
	shareAccounts      []priority.Account
	shareUsers         []priority.User
	fallbackConfigured bool

	mu        lockorder.Mutex[lockorder.Fairshare]
	ledger    *priority.Ledger
	chargedTo time.Time
	// released: when pending jobs became eligible after being blocked (a
	// hold, a begin time, a dependency); blocked: jobs not eligible now.
	// Keyed by job ID (an array remainder by its array job ID).
	released map[uint64]time.Time
	blocked  map[uint64]bool
	cycle    cycleShares
}

// New builds the state for a configuration, with an empty ledger.
func New(sc config.Scheduling, rules Rules) (*State, error) {
	pc := sc.Priority
	if sc.Basic {
		pc.Weights = priority.Weights{} // every job 0: submit order
	}
	calc, err := priority.New(pc)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	f := &State{calc: calc, rules: rules, accounts: map[string]bool{}, members: map[string][]string{},
		fallback: calc.Tree().Resolve("", "").Account,
		ledger:   calc.NewLedger(), released: map[uint64]time.Time{}, blocked: map[uint64]bool{}}
	f.weights, f.algorithm, f.shareAccounts, f.shareUsers = pc.Weights, pc.Algorithm, pc.Accounts, pc.Users
	if f.algorithm == "" {
		f.algorithm = priority.FairTree
	}
	f.accounts[f.fallback] = true
	for _, a := range pc.Accounts {
		f.accounts[a.Name] = true
		f.fallbackConfigured = f.fallbackConfigured || a.Name == f.fallback
	}
	for _, u := range pc.Users {
		f.members[u.Name] = append(f.members[u.Name], u.Account)
	}
	return f, nil
}

// Account is the account a job of owner's charges: the one it names, or
// the owner's default when it names none. An account that does not exist
// or that owner may not charge is an error in the request, said in a
// line for the submitter.
func (f *State) Account(owner, account string) (string, error) {
	if account == "" {
		return f.calc.Tree().Resolve(owner, "").Account, nil
	}
	if !f.accounts[account] {
		names := make([]string, 0, len(f.accounts))
		for a := range f.accounts {
			names = append(names, a)
		}
		sort.Strings(names)
		return "", fmt.Errorf("account %s does not exist (accounts: %s); nothing was submitted",
			account, strings.Join(names, ", "))
	}
	allowed, configured := f.members[owner]
	if !configured {
		allowed = []string{f.fallback}
	}
	if !slices.Contains(allowed, account) {
		return "", fmt.Errorf("user %s may not charge account %s (%s's accounts: %s); nothing was submitted",
			owner, account, owner, strings.Join(allowed, ", "))
	}
	return account, nil
}

// Billing is what a run of job on nodes nodes costs per second.
func (f *State) Billing(job *api.Job, nodes int) float64 {
	n := max(nodes, 1)
	return f.calc.Billing(priority.Alloc{CPUs: job.CPUs * n, MemBytes: job.MemBytes * int64(n), GPUs: f.rules.PhysicalGPUs(job, n)})
}

// Usage is an association's usage in the ledger, decayed to t.
func (f *State) Usage(user, account string, t time.Time) float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ledger.Usage(user, account, t)
}
