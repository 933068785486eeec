package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The fairshare usage ledger lives in a bucket of its own, created by the
// first save, so stores written before fairshare existed open as they are.
// It holds one record, replaced whole at every save: the controller saves
// it every few seconds and at shutdown, and after a crash re-charges the
// time since ValidTo from the jobs' own start and end times.
var (
	bucketUsage = []byte("usage")
	keyUsage    = []byte("ledger")
)

// UsageRecord is the controller's fairshare state as of ValidTo.
type UsageRecord struct {
	// ValidTo is the moment the ledger is exact to: every run of every job
	// has been charged up to ValidTo (or its end, if earlier), and nothing
	// after it.
	ValidTo time.Time `json:"valid_to"`
	// Ledger is the usage ledger as package priority encodes it.
	Ledger json.RawMessage `json:"ledger"`
	// Released maps pending jobs to the moment they became eligible after
	// a hold, a begin time or a dependency; Blocked lists pending jobs
	// that were not eligible at ValidTo. Together they keep the age
	// factor from counting held time across a restart.
	Released map[uint64]time.Time `json:"released,omitempty"`
	Blocked  []uint64             `json:"blocked,omitempty"`
}

// PutUsage replaces the stored usage record.
func (s *Store) PutUsage(rec *UsageRecord) error {
	if rec.ValidTo.IsZero() || len(rec.Ledger) == 0 {
		return errors.New("store: usage record without a time or a ledger")
	}
	body, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketUsage)
		if err != nil {
			return err
		}
		return b.Put(keyUsage, body)
	})
	if err != nil {
		return fmt.Errorf("storing usage: %w", err)
	}
	return nil
}

// Usage returns the stored usage record, nil if none was ever saved.
func (s *Store) Usage() (*UsageRecord, error) {
	var rec *UsageRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketUsage)
		if b == nil {
			return nil
		}
		v := b.Get(keyUsage)
		if v == nil {
			return nil
		}
		rec = new(UsageRecord)
		return json.Unmarshal(v, rec)
	})
	if err != nil {
		return nil, fmt.Errorf("reading usage from %s: %w", s.path, err)
	}
	return rec, nil
}
