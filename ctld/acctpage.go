package ctld

import (
	"slices"

	"github.com/corral-hpc/corral/api"
)

// A page of the accounting history (GET /v1/acct?limit=&before=): the
// newest jobs first, so the dashboard's finished list reads a screenful,
// never the whole history.

// maxAcctLimit bounds limit=: a page, not a history.
const maxAcctLimit = 10_000

// page keeps, when the filter asks for a page, only the items below
// Before whose records match, the newest Limit of them. It walks from the
// newest item back a chunk at a time under the read lock, so a page costs
// what it shows plus the items it skips, not the history.
func (h *acctHistory) page() {
	if h.f.Before > 0 {
		at, _ := slices.BinarySearchFunc(h.items, h.f.Before, func(it acctItem, id uint64) int { return compareIDs(it.id, id) })
		h.items = h.items[:at]
	}
	if h.f.Limit <= 0 {
		return
	}
	var kept []acctItem
	var recs []api.AcctRecord
	for end := len(h.items); end > 0 && len(kept) < h.f.Limit; {
		start := max(0, end-listChunk)
		h.mu.RLock()
		for i := end - 1; i >= start && len(kept) < h.f.Limit; i-- {
			it := h.items[i]
			recs = recs[:0]
			switch {
			case it.job != nil:
				recs = append(recs, acctRecords(it.job)...)
			case it.rem.remJob() != nil && it.rem.remJob().State.Terminal():
				recs = append(recs, remRecord(it.rem))
			}
			if slices.ContainsFunc(recs, func(r api.AcctRecord) bool { return acctMatches(&r, &h.f, h.caller) }) {
				kept = append(kept, it)
			}
		}
		h.mu.RUnlock()
		end = start
	}
	slices.Reverse(kept)
	h.items = kept
}
