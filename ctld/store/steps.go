package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/corral-hpc/corral/api"
	bolt "go.etcd.io/bbolt"
)

// Job steps (srun) are stored under their job: one record per step, keyed
// by the job ID and then the step ID, so a job's steps are one range of
// keys, read in step order. A second bucket indexes the steps that have not
// ended, so that a restart reads only those, however many steps the past
// holds (a pipeline engine starts one per task, thousands per job).
//
// A step's record is written in the same transaction as its job's when
// both change together (Update.Steps): a job's end and what it does to
// its running steps (ends them, or marks them JobEnd: waiting for their
// nodes' reports) are one commit, so after a crash the two never
// disagree. It costs nothing extra: bbolt commits any number of buckets
// with the same two fsyncs.
//
// Both buckets are created by the first step, so stores written before
// steps existed open as they are.
var (
	bucketSteps        = []byte("steps")
	bucketStepsRunning = []byte("steps_running")
)

// StepRecord is what is stored per step: the step as accounting shows it
// plus what only the controller needs.
type StepRecord struct {
	Step api.Step `json:"step"`
	// Layout is where the step's tasks run, as granted.
	Layout []api.StepNode `json:"layout"`
	// Overlap is --overlap: the step's CPUs are not held against other
	// steps.
	Overlap bool `json:"overlap,omitempty"`
	// MemBytes and GPUsPerTask are the step's --mem (per node) and
	// --gpus-per-task as granted (0: not asked).
	MemBytes    int64 `json:"mem_bytes,omitempty"`
	GPUsPerTask int   `json:"gpus_per_task,omitempty"`
	// Reports are the ends the step's nodes reported so far, one per node
	// at most; the step ends when every node of Layout has one.
	Reports []StepNodeEnd `json:"reports,omitempty"`
	// CancelRequested: the step was cancelled; it ends CANCELLED.
	CancelRequested bool `json:"cancel_requested,omitempty"`
	// JobEnd is set when the step's job stopped running while the step
	// still ran: the step stays RUNNING (and indexed) until its nodes
	// have reported, a node is lost, or the controller's bounded wait
	// after JobEnd.At passes.
	JobEnd *StepJobEnd `json:"job_end,omitempty"`
}

// StepJobEnd is how and when a step's job ended while the step ran.
type StepJobEnd struct {
	State api.JobState `json:"state"`
	At    time.Time    `json:"at"`
}

// StepNodeEnd is one node's report of a step's end.
type StepNodeEnd struct {
	Node string `json:"node"`
	// State is the node's own verdict (FAILED for tasks that could not
	// start, with Message); "" when ctld recorded the part as over.
	State        api.JobState `json:"state,omitempty"`
	ExitCode     int          `json:"exit_code"`
	Signal       int          `json:"signal,omitempty"`
	CPUTimeUsec  int64        `json:"cpu_time_usec,omitempty"`
	PeakMemBytes int64        `json:"peak_mem_bytes,omitempty"`
	// Lost: the node was lost, not heard from (the step ends NODE_FAIL).
	Lost    bool   `json:"lost,omitempty"`
	Message string `json:"message,omitempty"`
}

// stepKeyLen is a step key's length: the job ID, then the step ID.
const stepKeyLen = 12

// stepKey orders a job's steps by ID, the negative ones (batch, extern)
// first: the step ID is stored as an int32 with its sign bit flipped.
func stepKey(jobID uint64, stepID int) []byte {
	k := make([]byte, stepKeyLen)
	binary.BigEndian.PutUint64(k, jobID)
	binary.BigEndian.PutUint32(k[8:], uint32(int32(stepID))^(1<<31))
	return k
}

func parseStepKey(k []byte) (jobID uint64, stepID int, err error) {
	if len(k) != stepKeyLen {
		return 0, 0, fmt.Errorf("step key %x is not a job and step ID", k)
	}
	return binary.BigEndian.Uint64(k), int(int32(binary.BigEndian.Uint32(k[8:]) ^ (1 << 31))), nil
}

// stepIDFits: step IDs are stored as int32.
func stepIDFits(id int) bool { return id >= -1<<31 && id < 1<<31 }

// PutSteps writes step records (insert or replace) in one transaction.
// Their jobs must be stored.
func (s *Store) PutSteps(recs ...*StepRecord) error {
	return s.Apply(Update{Steps: recs})
}

func encodeSteps(recs []*StepRecord) ([][]byte, error) {
	out := make([][]byte, len(recs))
	for i, r := range recs {
		if r.Step.JobID == 0 {
			return nil, errors.New("store: a step record with job ID 0")
		}
		if !stepIDFits(r.Step.StepID) {
			return nil, fmt.Errorf("store: step ID %d out of range", r.Step.StepID)
		}
		var err error
		if out[i], err = json.Marshal(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// putSteps writes steps inside an Update's transaction and keeps the
// running index in step with their states.
func putSteps(tx *bolt.Tx, recs []*StepRecord, bodies [][]byte) error {
	if len(recs) == 0 {
		return nil
	}
	steps, err := tx.CreateBucketIfNotExists(bucketSteps)
	if err != nil {
		return err
	}
	running, err := tx.CreateBucketIfNotExists(bucketStepsRunning)
	if err != nil {
		return err
	}
	jobs := tx.Bucket(bucketJobs)
	for i, r := range recs {
		if jobs.Get(idKey(r.Step.JobID)) == nil {
			return fmt.Errorf("step %d.%s: job %d is not in the store", r.Step.JobID, api.StepName(r.Step.StepID), r.Step.JobID)
		}
		k := stepKey(r.Step.JobID, r.Step.StepID)
		if err := steps.Put(k, bodies[i]); err != nil {
			return err
		}
		if r.Step.State.Terminal() {
			err = running.Delete(k)
		} else {
			err = running.Put(k, nil)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// deleteJobSteps removes every step of the jobs, with the jobs
// (accounting retention).
func deleteJobSteps(tx *bolt.Tx, jobIDs []uint64) error {
	steps, running := tx.Bucket(bucketSteps), tx.Bucket(bucketStepsRunning)
	if steps == nil || len(jobIDs) == 0 {
		return nil
	}
	for _, id := range jobIDs {
		prefix := idKey(id)
		var keys [][]byte
		c := steps.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			keys = append(keys, bytes.Clone(k))
		}
		for _, k := range keys {
			if err := steps.Delete(k); err != nil {
				return err
			}
			if running != nil {
				if err := running.Delete(k); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func decodeStep(k, v []byte) (*StepRecord, error) {
	jobID, stepID, err := parseStepKey(k)
	if err != nil {
		return nil, err
	}
	rec := new(StepRecord)
	if err := json.Unmarshal(v, rec); err != nil {
		return nil, fmt.Errorf("step %d.%s: %w", jobID, api.StepName(stepID), err)
	}
	// The key is what the store files the record under: it wins.
	rec.Step.JobID, rec.Step.StepID = jobID, stepID
	return rec, nil
}

// Steps returns a job's steps in step ID order (batch and extern first).
func (s *Store) Steps(jobID uint64) ([]*StepRecord, error) {
	m, err := s.StepsOfJobs([]uint64{jobID})
	return m[jobID], err
}

// StepsOfJobs returns the steps of each of the jobs that has any, by job
// ID, read in one transaction.
func (s *Store) StepsOfJobs(jobIDs []uint64) (map[uint64][]*StepRecord, error) {
	out := make(map[uint64][]*StepRecord)
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSteps)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for _, id := range jobIDs {
			prefix := idKey(id)
			for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
				rec, err := decodeStep(k, v)
				if err != nil {
					return err
				}
				out[id] = append(out[id], rec)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading steps from %s: %w", s.path, err)
	}
	return out, nil
}

// LastStepID is the highest step ID a job's stored steps use, or -1 when
// it has no user step (batch and extern are negative): the job's next
// step is LastStepID+1.
func (s *Store) LastStepID(jobID uint64) (int, error) {
	last := -1
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSteps)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		// The key after every step of jobID is the first of jobID+1.
		var k []byte
		if jobID == 1<<64-1 {
			k, _ = c.Last()
		} else if k, _ = c.Seek(idKey(jobID + 1)); k == nil {
			k, _ = c.Last()
		} else {
			k, _ = c.Prev()
		}
		if k == nil || !bytes.HasPrefix(k, idKey(jobID)) {
			return nil
		}
		_, id, err := parseStepKey(k)
		if err != nil {
			return err
		}
		last = max(last, id)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("reading steps of job %d from %s: %w", jobID, s.path, err)
	}
	return last, nil
}

// RunningSteps returns every step that has not ended, in job and step
// order, from the running index: what a restart needs.
func (s *Store) RunningSteps() ([]*StepRecord, error) {
	var out []*StepRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		running, steps := tx.Bucket(bucketStepsRunning), tx.Bucket(bucketSteps)
		if running == nil || steps == nil {
			return nil
		}
		return running.ForEach(func(k, _ []byte) error {
			v := steps.Get(k)
			if v == nil {
				return fmt.Errorf("running step key %x has no step record", k)
			}
			rec, err := decodeStep(k, v)
			if err != nil {
				return err
			}
			out = append(out, rec)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("reading running steps from %s: %w", s.path, err)
	}
	return out, nil
}

// verifySteps decodes every step record and checks the running index
// against them: each step belongs to a stored job, and a step is indexed
// exactly when it has not ended (an unindexed running step would never be
// loaded, so never end). It returns the number of steps.
func verifySteps(tx *bolt.Tx) (n int, err error) {
	steps, running := tx.Bucket(bucketSteps), tx.Bucket(bucketStepsRunning)
	if steps == nil {
		if running != nil && running.Stats().KeyN > 0 {
			return 0, errors.New("running steps are indexed but no step is stored")
		}
		return 0, nil
	}
	jobs := tx.Bucket(bucketJobs)
	err = steps.ForEach(func(k, v []byte) error {
		rec, err := decodeStep(k, v)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("step %d.%s", rec.Step.JobID, api.StepName(rec.Step.StepID))
		if jobs.Get(k[:8]) == nil {
			return fmt.Errorf("%s belongs to no stored job", name)
		}
		indexed := running != nil && running.Get(k) != nil
		if ended := rec.Step.State.Terminal(); ended == indexed {
			return fmt.Errorf("%s is %s but the running index disagrees", name, rec.Step.State)
		}
		n++
		return nil
	})
	if err != nil || running == nil {
		return n, err
	}
	err = running.ForEach(func(k, _ []byte) error {
		if steps.Get(k) == nil {
			return fmt.Errorf("running step key %x has no step record", k)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
