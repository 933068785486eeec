package ctld

import (
	"context"
	"log"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fairshare"
	"github.com/corral-hpc/corral/ctld/internal/lockorder"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/gpu"
)

// The controller's side of usage accounting (package fairshare): the
// rules the ledger applies, charging the runs that commits end, and
// keeping the ledger in the store.

// usageRules are the controller's rules that package fairshare applies.
var usageRules = fairshare.Rules{
	PhysicalGPUs: gpu.Physical,
	HeldOrEarly:  func(job *api.Job, now time.Time) bool { return heldOrEarly(job, now) != "" },
}

// usageLedger keeps package fairshare's ledger in the store: restored
// at start (re-charging from the job records what ran since it was
// saved), saved every fairshare.SaveInterval and at shutdown.
type usageLedger struct {
	fs    *fairshare.State
	store *store.Store
	q     *queue
	mu    *lockorder.RWMutex[lockorder.Server] // guards q
	log   *log.Logger
}

// load restores the ledger saved last and charges what ran since (New
// calls it once the jobs are loaded).
func (u *usageLedger) load(now time.Time) error {
	rec, err := u.store.Usage()
	if err != nil {
		return err
	}
	if err := u.fs.Restore(rec, records(u.q.all()), now); err != nil {
		u.log.Printf("fairshare: %v; rebuilt it from the job records", err)
	}
	return nil
}

// save charges running jobs up to now and stores the ledger.
func (u *usageLedger) save(now time.Time) error {
	u.mu.RLock()
	rec, err := u.fs.Record(records(u.q.unfinished()), now, u.q.pendingKey)
	u.mu.RUnlock()
	if err != nil {
		return err
	}
	return u.store.PutUsage(rec)
}

// loop saves the ledger every fairshare.SaveInterval until ctx ends
// (Server.Close saves it a last time).
func (u *usageLedger) loop(ctx context.Context) {
	t := time.NewTicker(fairshare.SaveInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if err := u.save(now); err != nil {
				u.log.Printf("fairshare: saving usage: %v (it is re-charged from the job records after a restart)", err)
			}
		}
	}
}

func newUsageLedger(fs *fairshare.State, st *store.Store, q *queue, mu *lockorder.RWMutex[lockorder.Server], log *log.Logger) *usageLedger {
	return &usageLedger{fs: fs, store: st, q: q, mu: mu, log: log}
}
