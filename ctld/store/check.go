package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
	"golang.org/x/sys/unix"
)

// ErrDamaged marks a state file that failed verification. Open refuses
// such a file rather than serve whatever part of it still reads: a job
// silently missing is worse than a controller that does not start.
var ErrDamaged = errors.New("state file is damaged")

// maxCheckErrors bounds how many of bbolt's findings are kept: the first
// few say enough, and a badly damaged file can yield thousands.
const maxCheckErrors = 3

// verifyStructure runs bbolt's page accounting (tx.Check): no page lost,
// no freed page in use, keys in order. tx.Check reads pages on a
// goroutine of its own, where a garbled page's assertion or a fault
// cannot be recovered, so it runs only on a file checkPages has walked
// (every page it reads is inside the file, with an intact header).
func verifyStructure(db *bolt.DB) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading pages: %v", r)
		}
	}()
	return db.View(func(tx *bolt.Tx) error {
		var found []string
		n := 0
		for cerr := range tx.Check() {
			if n < maxCheckErrors {
				found = append(found, cerr.Error())
			}
			n++
		}
		if n > 0 {
			more := ""
			if n > maxCheckErrors {
				more = fmt.Sprintf(" (and %d more)", n-maxCheckErrors)
			}
			return fmt.Errorf("%s%s", strings.Join(found, "; "), more)
		}
		return nil
	})
}

// verifyRecords decodes every record of every bucket the store owns and
// counts them into rep.
func verifyRecords(db *bolt.DB, rep *Report) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading records: %v", r)
		}
	}()
	err = db.View(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketMeta, bucketJobs, bucketNodes} {
			if tx.Bucket(b) == nil {
				return fmt.Errorf("bucket %q is missing", b)
			}
		}
		each := func(bucket []byte, what string, count *int, v any) error {
			b := tx.Bucket(bucket)
			if b == nil {
				return nil
			}
			return b.ForEach(func(k, body []byte) error {
				if len(bucket) != len(bucketNodes) && len(k) != 8 { // job and array keys are IDs
					return fmt.Errorf("%s key %x is not an ID", what, k)
				}
				if err := json.Unmarshal(body, v); err != nil {
					return fmt.Errorf("%s %x: %w", what, k, err)
				}
				*count++
				return nil
			})
		}
		if err := each(bucketJobs, "job", &rep.Jobs, new(JobRecord)); err != nil {
			return err
		}
		if err := each(bucketArrays, "array", &rep.Arrays, new(ArrayRecord)); err != nil {
			return err
		}
		if err := each(bucketNodes, "node", &rep.Nodes, new(NodeRecord)); err != nil {
			return err
		}
		var err error
		if rep.Steps, err = verifySteps(tx); err != nil {
			return err
		}
		if v := tx.Bucket(bucketUsage); v != nil {
			if body := v.Get(keyUsage); body != nil {
				if err := json.Unmarshal(body, new(UsageRecord)); err != nil {
					return fmt.Errorf("usage ledger: %w", err)
				}
			}
		}
		return nil
	})
	return err
}

// Report is what Check found in a sound file.
type Report struct {
	Jobs, Arrays, Nodes, Steps int
	LastJobID                  uint64
	Bytes                      int64
}

// Check verifies the state file at path without changing it: bbolt's
// structure checks and every record decoded. It fails with ErrDamaged on
// a damaged file, and with a plain error on a missing or locked one.
func Check(path string) (Report, error) {
	var rep Report
	mark, err := checkBeforeBolt(path) // marker.go, pages.go
	if err != nil {
		return rep, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return rep, fmt.Errorf("state file: %w", err)
	}
	rep.Bytes = st.Size()
	db, err := openBolt(path, &bolt.Options{ReadOnly: true, Timeout: 2 * time.Second})
	if err != nil {
		return rep, err
	}
	defer db.Close()
	if err := verifyStructure(db); err != nil {
		return rep, damaged(path, err)
	}
	if err := verifyRecords(db, &rep); err != nil {
		return rep, damaged(path, err)
	}
	if rep.LastJobID, err = lastJobID(db); err != nil {
		return rep, err
	}
	if mark.LastJobID > 0 && rep.LastJobID == 0 {
		return rep, errLostJobs(path, "holds no jobs", mark)
	}
	return rep, nil
}

func damaged(path string, err error) error {
	return fmt.Errorf("%w: %s: %v (the file is left as it is; restore a backup, see docs/operations.md)", ErrDamaged, path, err)
}

// openBolt is bolt.Open with its errors made plain: a held lock names the
// likely culprit, and a file bbolt cannot even open is damaged.
func openBolt(path string, opt *bolt.Options) (db *bolt.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, damaged(path, fmt.Errorf("opening: %v", r))
		}
	}()
	db, err = bolt.Open(path, 0o600, opt)
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, fmt.Errorf("state file %s is locked by another process (is another corral-ctld running on this state directory?)", path)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch):
		return nil, damaged(path, err)
	case err != nil:
		return nil, fmt.Errorf("opening state file %s: %w", path, err)
	}
	return db, nil
}

// Backup writes a consistent copy of the whole file to w from one read
// transaction: submits and updates go on meanwhile and are simply not in
// the copy. The copy is a valid state file as it is.
func (s *Store) Backup(w io.Writer) (int64, error) {
	var n int64
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	return n, err
}

// DropMappedPages tells the kernel this process no longer needs the state
// file's pages mapped: after the controller has loaded everything, they
// would otherwise count in its resident memory (about the file's size)
// for no use. They stay in the page cache, and bbolt faults in what a
// later transaction reads. It runs inside a read transaction, which holds
// bbolt's mmap lock, so the mapping cannot move meanwhile.
func (s *Store) DropMappedPages() error {
	return s.db.View(func(tx *bolt.Tx) error {
		info := s.db.Info()
		size := uintptr(tx.Size())
		if info.Data == 0 || size == 0 {
			return nil
		}
		_, _, errno := unix.Syscall(unix.SYS_MADVISE, info.Data, size, unix.MADV_DONTNEED)
		if errno != 0 {
			return fmt.Errorf("madvise on the state file mapping: %w", errno)
		}
		return nil
	})
}
