package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/corral-hpc/corral/api"
	bolt "go.etcd.io/bbolt"
)

// FileName is the store's file inside the state directory.
const FileName = "ctld.db"

// schemaVersion is written on creation; a newer file is refused rather
// than misread.
const schemaVersion = 1

var (
	bucketMeta  = []byte("meta")
	bucketJobs  = []byte("jobs")
	bucketNodes = []byte("nodes")
	keySchema   = []byte("schema")
)

// JobRecord is what is stored per job: the job as users see it plus what
// only the controller needs.
type JobRecord struct {
	Job api.Job `json:"job"`
	// Home is the owner's home directory, resolved at submit time and
	// handed to the node in the launch request.
	Home string `json:"home,omitempty"`
	// RequeueRequested: the job was requeued while running; when its end
	// arrives it goes back to PENDING instead of ending.
	RequeueRequested bool `json:"requeue_requested,omitempty"`
	// EnforceTimeLimit: the time limit was lowered while the job ran, so
	// the controller, not the node, ends it at the new limit.
	EnforceTimeLimit bool `json:"enforce_time_limit,omitempty"`
	// CancelRequestedBy: the uid whose cancel of the running job went to
	// its node; the end it reports then records that uid (sacct's
	// "CANCELLED by UID") even after a controller restart.
	CancelRequestedBy *uint32 `json:"cancel_requested_by,omitempty"`
}

// NodeRecord is what is stored per node that ever registered.
type NodeRecord struct {
	Name     string    `json:"name"`
	Addr     string    `json:"addr"`
	CPUs     int       `json:"cpus"`
	MemBytes int64     `json:"mem_bytes"`
	BootID   string    `json:"boot_id,omitempty"`
	LastSeen time.Time `json:"last_seen"`
	// GPUs and FGPUPerGPUHundredths are the node's devices and its own
	// --fgpu-per-gpu (0: not set), as it last registered.
	GPUs                 []api.GPU `json:"gpus,omitempty"`
	FGPUPerGPUHundredths int       `json:"fgpu_per_gpu_hundredths,omitempty"`
	// MountRoots are its --mount-root directories (submit checks --mount).
	MountRoots []string `json:"mount_roots,omitempty"`
	// Drain is an administrator's reason for taking the node out of
	// service ("" when it is in service), since DrainedSince. Down says
	// it was set DOWN, not only drained: its runs were declared dead.
	Drain        string    `json:"drain,omitempty"`
	DrainedSince time.Time `json:"drained_since,omitzero"`
	Down         bool      `json:"down,omitempty"`
}

// Options tune Open; the zero value is sensible.
type Options struct {
	// OpenTimeout bounds the wait for the file lock (default 2s): another
	// controller holding the file makes Open fail instead of hang.
	OpenTimeout time.Duration
	// SkipVerify skips the structure check Open runs on the whole file
	// (check.go). Only for tests and tools that verify otherwise.
	SkipVerify bool
}

// Store is an open state file. Its methods are safe for concurrent use.
type Store struct {
	db   *bolt.DB
	path string

	adds          chan *addRequest // closed by Close: the committer drains it and exits
	committerDone chan struct{}
	closeMu       sync.RWMutex
	closed        bool
	// markedID is the last job ID the marker file records (marker.go;
	// owned by the committer after Open, by Close after it).
	markedID uint64
}

// Open opens (creating if needed) the store file at path.
func Open(path string, opt Options) (*Store, error) {
	if opt.OpenTimeout <= 0 {
		opt.OpenTimeout = 2 * time.Second
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	mark, err := checkBeforeBolt(path) // marker.go, pages.go
	if err != nil {
		return nil, err
	}
	db, err := openBolt(path, &bolt.Options{Timeout: opt.OpenTimeout}) // check.go
	if err != nil {
		return nil, err
	}
	if !opt.SkipVerify {
		if err := verifyStructure(db); err != nil {
			db.Close()
			return nil, damaged(path, err)
		}
	}
	last, err := lastJobID(db)
	if err == nil && mark.LastJobID > 0 && last == 0 {
		// A fresh database in the old one's place: refused before the
		// buckets below are created in it.
		db.Close()
		return nil, errLostJobs(path, "holds no jobs", mark)
	}
	db.MaxBatchDelay = 2 * time.Millisecond // node records (PutNodes)
	// An initialized file is only read here: opening (or refusing) a
	// file must not write to it.
	update := db.Update
	if initialized(db) {
		update = db.View
	}
	err = update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketMeta, bucketJobs, bucketNodes} {
			if !tx.Writable() {
				continue
			}
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		if v := meta.Get(keySchema); v != nil {
			n, err := strconv.Atoi(string(v))
			if err != nil || n > schemaVersion {
				return fmt.Errorf("state file %s has schema version %q; this corral-ctld understands up to %d", path, v, schemaVersion)
			}
			return nil
		}
		return meta.Put(keySchema, []byte(strconv.Itoa(schemaVersion)))
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	if last > mark.LastJobID {
		if err := writeMarker(path, last); err != nil {
			db.Close()
			return nil, err
		}
	}
	s := &Store{db: db, path: path, adds: make(chan *addRequest, maxGroup), committerDone: make(chan struct{})}
	s.markedID = max(last, mark.LastJobID)
	go s.commitAdds()
	return s, nil
}

// initialized: every bucket Open creates, and a schema version, exist.
func initialized(db *bolt.DB) bool {
	ok := true
	_ = db.View(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketMeta, bucketJobs, bucketNodes} {
			ok = ok && tx.Bucket(b) != nil
		}
		ok = ok && tx.Bucket(bucketMeta).Get(keySchema) != nil
		return nil
	})
	return ok
}

// Path is the file's path.
func (s *Store) Path() string { return s.path }

// Close closes the file; later calls fail.
func (s *Store) Close() error {
	s.closeMu.Lock()
	if !s.closed {
		s.closed = true
		close(s.adds) // every submit already queued is still committed
	}
	s.closeMu.Unlock()
	<-s.committerDone
	s.updateMarker() // the next start then knows the last ID exactly
	return s.db.Close()
}

func idKey(id uint64) []byte {
	k := make([]byte, 8)
	binary.BigEndian.PutUint64(k, id)
	return k
}

// AddJob stores a new job under the next job ID, sets rec.Job.ID and
// returns it once the commit is on disk. Concurrent calls share commits.
func (s *Store) AddJob(rec *JobRecord) (uint64, error) {
	// Encode outside the shared transaction: the key is the ID, so the
	// body need not contain it (Jobs restores it from the key).
	rec.Job.ID = 0
	body, err := json.Marshal(rec)
	if err != nil {
		return 0, err
	}
	req := &addRequest{body: body, done: make(chan error, 1)}
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return 0, errors.New("storing job: the store is closed")
	}
	s.adds <- req // the committer runs until Close, which waits for us
	s.closeMu.RUnlock()
	if err := <-req.done; err != nil {
		return 0, fmt.Errorf("storing job: %w", err)
	}
	rec.Job.ID = req.id
	return req.id, nil
}

type addRequest struct {
	body []byte
	id   uint64
	done chan error
	// tasks > 0 makes this an array remainder (AddArray) reserving that
	// many IDs.
	tasks int
}

// maxGroup bounds how many submits share one commit.
const maxGroup = 1024

// maxGather bounds how long the committer waits for submitters it just
// answered to come back (see commitAdds).
const maxGather = 2 * time.Millisecond

// commitAdds is the group committer. It commits every submit waiting at
// the moment in one transaction (one pair of fsyncs), answers them all,
// and repeats, so a lone submit is committed at once and a crowd shares
// commits.
//
// Under load there is one refinement. Clients answered at the end of one
// commit come back a moment later; if the next commit started at once
// with only those who queued meanwhile, the clients would split into two
// half-size cohorts alternating commits. So after a commit of g submits,
// with q already queued, the committer waits until g+q are queued or half
// the last commit's duration (at most maxGather) has passed. A lone client
// (g=1, q=0) never waits: its next submit is the one awaited.
func (s *Store) commitAdds() {
	defer close(s.committerDone)
	var group []*addRequest
	expect := 1
	var lastCommit time.Duration
	for open := true; open; {
		r, ok := <-s.adds
		if !ok {
			return
		}
		group = append(group[:0], r)
		var deadline <-chan time.Time
		if expect > 1 {
			deadline = time.After(min(lastCommit/2, maxGather))
		}
	gather:
		for len(group) < maxGroup {
			select {
			case r, ok := <-s.adds:
				if !ok {
					open = false
					break gather
				}
				group = append(group, r)
				continue
			default:
			}
			if len(group) >= expect || deadline == nil {
				break
			}
			select {
			case r, ok := <-s.adds:
				if !ok {
					open = false
					break gather
				}
				group = append(group, r)
			case <-deadline:
				break gather
			}
		}
		start := time.Now()
		err := s.commitGroup(group)
		lastCommit = time.Since(start)
		if err == nil && s.markedID == 0 {
			s.updateMarker()
		}
		for _, r := range group {
			r.done <- err
		}
		expect = len(group) + len(s.adds)
	}
}

// commitGroup stores a group of new jobs in one transaction, numbering
// them from the sequence.
func (s *Store) commitGroup(group []*addRequest) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketJobs)
		// New IDs only ever append: full pages instead of bbolt's half
		// full splits halve the file, and what a restart has to read.
		b.FillPercent = appendFill
		for _, r := range group {
			if r.tasks > 0 {
				if err := putArray(tx, b, r); err != nil {
					return err
				}
				continue
			}
			n, err := b.NextSequence()
			if err != nil {
				return err
			}
			r.id = n
			if err := b.Put(idKey(n), r.body); err != nil {
				return err
			}
		}
		return nil
	})
}

// PutJobs overwrites existing jobs' records in one transaction.
func (s *Store) PutJobs(recs ...*JobRecord) error {
	if len(recs) == 0 {
		return nil
	}
	bodies := make([][]byte, len(recs))
	for i, r := range recs {
		if r.Job.ID == 0 {
			return errors.New("store: PutJobs with job ID 0")
		}
		if r.Job.Completing || r.Job.CompletingNodes != nil { // a view's, set only while ctld runs
			c := *r
			c.Job.Completing, c.Job.CompletingNodes = false, nil
			r = &c
		}
		var err error
		if bodies[i], err = json.Marshal(r); err != nil {
			return err
		}
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketJobs)
		for i, r := range recs {
			if b.Get(idKey(r.Job.ID)) == nil {
				return fmt.Errorf("job %d is not in the store", r.Job.ID)
			}
			if err := b.Put(idKey(r.Job.ID), bodies[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("storing job state: %w", err)
	}
	return nil
}

// appendFill is the jobs bucket's fill percent for appends (see
// commitGroup).
const appendFill = 0.95

// Jobs returns every stored job in ID order. Records are decoded on every
// core: decoding is most of a restart's time (docs/benchmarks.md, Load).
func (s *Store) Jobs() ([]*JobRecord, error) {
	var out []*JobRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		var keys, bodies [][]byte // valid until the transaction ends
		err := tx.Bucket(bucketJobs).ForEach(func(k, v []byte) error {
			keys, bodies = append(keys, k), append(bodies, v)
			return nil
		})
		if err != nil {
			return err
		}
		out = make([]*JobRecord, len(keys))
		return decodeParallel(len(keys), func(i int) error {
			rec := new(JobRecord)
			if err := json.Unmarshal(bodies[i], rec); err != nil {
				return fmt.Errorf("job %d: %w", binary.BigEndian.Uint64(keys[i]), err)
			}
			rec.Job.ID = binary.BigEndian.Uint64(keys[i])
			out[i] = rec
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("reading jobs from %s: %w", s.path, err)
	}
	return out, nil
}

// decodeParallel runs decode(0..n-1) on GOMAXPROCS goroutines, in
// contiguous chunks, and returns the first error.
func decodeParallel(n int, decode func(i int) error) error {
	workers := min(runtime.GOMAXPROCS(0), max(n/1024, 1))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w * n / workers; i < (w+1)*n/workers; i++ {
				if err := decode(i); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// LastJobID is the highest ID ever handed out (0 before the first job).
func (s *Store) LastJobID() (uint64, error) {
	return lastJobID(s.db)
}

// lastJobID is the jobs bucket's sequence (0 without the bucket).
func lastJobID(db *bolt.DB) (uint64, error) {
	var n uint64
	err := db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketJobs); b != nil {
			n = b.Sequence()
		}
		return nil
	})
	return n, err
}

// PutNodes stores node records (insert or replace). Concurrent calls share
// commits, so a burst of registrations costs few fsyncs.
func (s *Store) PutNodes(nodes ...NodeRecord) error {
	if len(nodes) == 0 {
		return nil
	}
	bodies := make([][]byte, len(nodes))
	for i, n := range nodes {
		var err error
		if bodies[i], err = json.Marshal(n); err != nil {
			return err
		}
	}
	err := s.db.Batch(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketNodes)
		for i, n := range nodes {
			if err := b.Put([]byte(n.Name), bodies[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("storing nodes: %w", err)
	}
	return nil
}

// Nodes returns every stored node in name order.
func (s *Store) Nodes() ([]NodeRecord, error) {
	var out []NodeRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketNodes).ForEach(func(k, v []byte) error {
			var n NodeRecord
			if err := json.Unmarshal(v, &n); err != nil {
				return fmt.Errorf("node %s: %w", k, err)
			}
			out = append(out, n)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("reading nodes from %s: %w", s.path, err)
	}
	return out, nil
}
