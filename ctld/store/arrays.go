package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/corral-hpc/corral/api"
	bolt "go.etcd.io/bbolt"
)

// Array jobs are stored compactly, as Slurm stores them: one ArrayRecord
// holds every task that has not started yet, however many there are, and a
// task gets a JobRecord of its own only when it starts (or is cancelled,
// held or otherwise changed on its own). Submitting an array reserves one
// job ID per task from the job sequence, so that every task's ID is known
// from the start: the array job ID is the first task's.

// bucketArrays holds ArrayRecords by array job ID. It is created by the
// first array submit, so stores written before arrays existed open as
// they are.
var bucketArrays = []byte("arrays")

// ArrayRecord is an array job's pending remainder.
type ArrayRecord struct {
	// Job holds what every task shares: spec, owner, submit time, state
	// (PENDING, or CANCELLED once the remainder was cancelled) and history.
	// Job.ID is the array job ID.
	Job  api.Job `json:"job"`
	Home string  `json:"home,omitempty"`
	// Tasks is how many IDs the array reserved: task IDs run from Job.ID
	// to Job.ID+Tasks-1, in index order.
	Tasks int `json:"tasks"`
	// Pending lists the indexes that have no JobRecord of their own yet.
	Pending []api.ArrayRange `json:"pending"`
}

// AddArray stores a new array job's remainder, reserving tasks consecutive
// job IDs; it sets rec.Job.ID to the first and returns it once the commit
// is on disk. It shares commits with AddJob.
func (s *Store) AddArray(rec *ArrayRecord) (uint64, error) {
	if rec.Tasks < 1 {
		return 0, errors.New("storing array: no tasks")
	}
	rec.Job.ID = 0
	body, err := json.Marshal(rec)
	if err != nil {
		return 0, err
	}
	req := &addRequest{body: body, done: make(chan error, 1), tasks: rec.Tasks}
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return 0, errors.New("storing array: the store is closed")
	}
	s.adds <- req
	s.closeMu.RUnlock()
	if err := <-req.done; err != nil {
		return 0, fmt.Errorf("storing array: %w", err)
	}
	rec.Job.ID = req.id
	return req.id, nil
}

// putArray reserves r.tasks IDs in the job sequence and stores the
// remainder under the first; runs inside the committer's transaction.
func putArray(tx *bolt.Tx, jobs *bolt.Bucket, r *addRequest) error {
	arrays, err := tx.CreateBucketIfNotExists(bucketArrays)
	if err != nil {
		return err
	}
	first := jobs.Sequence() + 1
	if err := jobs.SetSequence(jobs.Sequence() + uint64(r.tasks)); err != nil {
		return err
	}
	r.id = first
	return arrays.Put(idKey(first), r.body)
}

// Update is a set of writes committed in one transaction.
type Update struct {
	// Jobs are records to write: existing jobs, or array tasks getting
	// their own record (their IDs were reserved by AddArray).
	Jobs []*JobRecord
	// Arrays are remainders to overwrite; DeleteArrays are remainders with
	// no task left in them.
	Arrays       []*ArrayRecord
	DeleteArrays []uint64
	// DeleteJobs are job records to remove (accounting retention), with
	// their steps.
	DeleteJobs []uint64
	// Steps are step records to write (insert or replace), committed with
	// the jobs: a job's end and its steps' ends are one commit.
	Steps []*StepRecord
}

// Apply commits u in one transaction: all of it or nothing.
func (s *Store) Apply(u Update) error {
	jobBodies, err := encodeAll(u.Jobs, func(r *JobRecord) uint64 { return r.Job.ID })
	if err != nil {
		return err
	}
	arrayBodies, err := encodeAll(u.Arrays, func(r *ArrayRecord) uint64 { return r.Job.ID })
	if err != nil {
		return err
	}
	stepBodies, err := encodeSteps(u.Steps)
	if err != nil {
		return err
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		jobs := tx.Bucket(bucketJobs)
		for i, r := range u.Jobs {
			if r.Job.ID > jobs.Sequence() {
				return fmt.Errorf("job %d was never submitted", r.Job.ID)
			}
			if err := jobs.Put(idKey(r.Job.ID), jobBodies[i]); err != nil {
				return err
			}
		}
		for _, id := range u.DeleteJobs {
			if err := jobs.Delete(idKey(id)); err != nil {
				return err
			}
		}
		if err := deleteJobSteps(tx, u.DeleteJobs); err != nil {
			return err
		}
		if err := putSteps(tx, u.Steps, stepBodies); err != nil {
			return err
		}
		if len(u.Arrays)+len(u.DeleteArrays) == 0 {
			return nil
		}
		arrays, err := tx.CreateBucketIfNotExists(bucketArrays)
		if err != nil {
			return err
		}
		for i, r := range u.Arrays {
			if arrays.Get(idKey(r.Job.ID)) == nil {
				return fmt.Errorf("array job %d is not in the store", r.Job.ID)
			}
			if err := arrays.Put(idKey(r.Job.ID), arrayBodies[i]); err != nil {
				return err
			}
		}
		for _, id := range u.DeleteArrays {
			if err := arrays.Delete(idKey(id)); err != nil {
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

func encodeAll[T any](recs []*T, id func(*T) uint64) ([][]byte, error) {
	out := make([][]byte, len(recs))
	for i, r := range recs {
		if id(r) == 0 {
			return nil, errors.New("store: a record with job ID 0")
		}
		var err error
		if out[i], err = json.Marshal(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Arrays returns every stored array remainder in ID order.
func (s *Store) Arrays() ([]*ArrayRecord, error) {
	var out []*ArrayRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketArrays)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			rec := new(ArrayRecord)
			if err := json.Unmarshal(v, rec); err != nil {
				return fmt.Errorf("array job %d: %w", binary.BigEndian.Uint64(k), err)
			}
			rec.Job.ID = binary.BigEndian.Uint64(k)
			out = append(out, rec)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("reading array jobs from %s: %w", s.path, err)
	}
	return out, nil
}
