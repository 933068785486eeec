package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"runtime/debug"
	"time"

	"golang.org/x/sys/unix"
)

// bbolt trusts its file: a garbled page header trips an assertion (in
// tx.Check, on a goroutine of its own, so nothing can recover it), a file
// shorter than its meta page says faults on the mapping (SIGBUS), and an
// empty file is silently initialised as a new database. So before bbolt
// opens the file, checkPages walks every page bbolt will touch from the
// raw bytes, with Go's bounds checks: page headers, the high-water mark
// against the file's size, branch and leaf elements, inline buckets and
// the freelist. Only a file that passes is handed to bbolt.

// The bbolt file format (go.etcd.io/bbolt, format version 2): a 16-byte
// page header (id u64, flags u16, count u16, overflow u32), then the
// page's elements.
const (
	pageHeaderSize   = 16
	branchElemSize   = 16 // pos u32, ksize u32, pgid u64
	leafElemSize     = 16 // flags u32, pos u32, ksize u32, vsize u32
	inBucketSize     = 16 // root pgid u64, sequence u64
	flagBranch       = 0x01
	flagLeaf         = 0x02
	flagMeta         = 0x04
	flagFreelist     = 0x10
	leafFlagBucket   = 0x01
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	metaChecksumAt   = 56 // the meta's checksum covers the bytes before it
	metaSize         = 64
	noFreelist       = ^uint64(0)
	maxBucketNesting = 64 // the store nests none; bounds recursion on garbage
)

// boltMeta is the part of a meta page checkPages needs.
type boltMeta struct {
	pageSize           int
	root, freelist     uint64
	hwm, txid          uint64
	valid              bool
	headerID, hdrFlags uint64
}

func readMeta(page []byte) boltMeta {
	le := binary.LittleEndian
	var m boltMeta
	if len(page) < pageHeaderSize+metaSize {
		return m
	}
	m.headerID, m.hdrFlags = le.Uint64(page), uint64(le.Uint16(page[8:]))
	b := page[pageHeaderSize : pageHeaderSize+metaSize]
	h := fnv.New64a()
	h.Write(b[:metaChecksumAt])
	m.valid = le.Uint32(b) == boltMagic && le.Uint32(b[4:]) == boltVersion && h.Sum64() == le.Uint64(b[metaChecksumAt:])
	m.pageSize = int(le.Uint32(b[8:]))
	m.root = le.Uint64(b[16:])
	m.freelist, m.hwm, m.txid = le.Uint64(b[32:]), le.Uint64(b[40:]), le.Uint64(b[48:])
	return m
}

// checkPages verifies the file at path as described above, reading it
// through a private read-only mapping (bbolt's later reads hit the same
// page cache). It never writes.
func checkPages(path string) (err error) {
	// O_NONBLOCK: a FIFO in the file's place must not hang the open.
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("opening state file %s: %w", path, err)
	}
	defer f.Close()
	if err := waitSharedLock(f, 2*time.Second); err != nil {
		return fmt.Errorf("state file %s is locked by another process (is another corral-ctld running on this state directory?)", path)
	}
	defer unix.Flock(int(f.Fd()), unix.LOCK_UN)
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("state file %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("state file %s is %s, not a regular file", path, fileKind(st.Mode()))
	}
	if st.Size() == 0 {
		return damaged(path, errors.New("the file is empty (0 bytes), not a database"))
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("state file %s: mapping it: %w", path, err)
	}
	defer unix.Munmap(data)
	// The file may shrink under us (another process truncating it):
	// the fault then becomes a panic, recovered below like a bounds error.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = damaged(path, fmt.Errorf("reading pages: %v", r))
		}
	}()
	if err := walkPages(data); err != nil {
		return damaged(path, err)
	}
	return nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "of type " + m.Type().String()
}

// waitSharedLock takes a shared flock on f (bbolt's own lock protocol),
// so a file being written by a live controller is reported as locked,
// not as damaged.
func waitSharedLock(f *os.File, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
		if err == nil || err != unix.EWOULDBLOCK || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pageWalk is one pass over a mapped file.
type pageWalk struct {
	data     []byte
	pageSize int
	hwm      uint64
	seen     []bool // pages reached so far: each may be reached once
}

func walkPages(data []byte) error {
	meta, err := pickMeta(data)
	if err != nil {
		return err
	}
	if meta.hwm > uint64(len(data)/meta.pageSize) {
		return fmt.Errorf("the file is %d bytes but its meta page says it holds %d pages of %d bytes: truncated",
			len(data), meta.hwm, meta.pageSize)
	}
	w := &pageWalk{data: data, pageSize: meta.pageSize, hwm: meta.hwm, seen: make([]bool, meta.hwm)}
	w.seen[0], w.seen[1] = true, true
	if meta.freelist != noFreelist {
		if err := w.checkFreelist(meta.freelist); err != nil {
			return err
		}
	}
	return w.bucket(meta.root, nil, 0)
}

// pickMeta finds the page size as bbolt does (meta 0, else meta 1 at each
// possible page size), requires both meta page headers to be intact (a
// garbled one trips bbolt's assertions) and returns the valid meta with
// the highest transaction ID, the one bbolt uses. One meta failing only
// its checksum is what a crash during a commit can leave; bbolt falls
// back to the other, and so does this.
func pickMeta(data []byte) (boltMeta, error) {
	if len(data) < 2*1024 {
		return boltMeta{}, fmt.Errorf("the file is %d bytes, too short for a database", len(data))
	}
	pageSize := 0
	if m := readMeta(data); m.valid {
		pageSize = m.pageSize
	} else {
		for i := range 15 {
			pos := 1024 << i
			if pos+pageHeaderSize+metaSize > len(data) {
				break
			}
			if m := readMeta(data[pos:]); m.valid {
				pageSize = m.pageSize
				break
			}
		}
	}
	if pageSize < 1024 || pageSize&(pageSize-1) != 0 {
		return boltMeta{}, errors.New("neither meta page is valid (no database header in the first pages)")
	}
	if 2*pageSize > len(data) {
		return boltMeta{}, fmt.Errorf("the file is %d bytes, shorter than its two meta pages of %d bytes: truncated", len(data), pageSize)
	}
	var best boltMeta
	for id := range 2 {
		m := readMeta(data[id*pageSize:])
		if m.headerID != uint64(id) || m.hdrFlags != flagMeta {
			return boltMeta{}, fmt.Errorf("meta page %d is garbled (id %d, flags %#x)", id, m.headerID, m.hdrFlags)
		}
		if m.valid && m.pageSize == pageSize && (!best.valid || m.txid > best.txid) {
			best = m
		}
	}
	if best.hwm < 2 || best.root < 2 || best.root >= best.hwm {
		return boltMeta{}, fmt.Errorf("meta page: root page %d outside the file's %d pages", best.root, best.hwm)
	}
	return best, nil
}

// page returns page id with its overflow pages after checking it lies
// below the high-water mark, identifies as id and has the wanted type.
func (w *pageWalk) page(id uint64, want uint16) ([]byte, error) {
	if id < 2 || id >= w.hwm {
		return nil, fmt.Errorf("page %d: outside the file's %d pages", id, w.hwm)
	}
	if w.seen[id] {
		return nil, fmt.Errorf("page %d: referenced twice", id)
	}
	off := id * uint64(w.pageSize)
	hdr := w.data[off : off+pageHeaderSize]
	le := binary.LittleEndian
	if got := le.Uint64(hdr); got != id {
		return nil, fmt.Errorf("page %d: identifies as page %d", id, got)
	}
	flags, overflow := le.Uint16(hdr[8:]), uint64(le.Uint32(hdr[12:]))
	if flags&want == 0 || flags&(flags-1) != 0 {
		return nil, fmt.Errorf("page %d: type %#x where %#x belongs", id, flags, want)
	}
	if id+overflow >= w.hwm {
		return nil, fmt.Errorf("page %d: %d overflow pages run past the file's %d pages", id, overflow, w.hwm)
	}
	for i := range overflow + 1 {
		w.seen[id+i] = true
	}
	return w.data[off : off+(overflow+1)*uint64(w.pageSize)], nil
}

func (w *pageWalk) checkFreelist(id uint64) error {
	p, err := w.page(id, flagFreelist)
	if err != nil {
		return fmt.Errorf("freelist: %w", err)
	}
	le := binary.LittleEndian
	n, start := uint64(le.Uint16(p[10:])), uint64(pageHeaderSize)
	if n == 0xFFFF { // the real count is the first element
		n, start = le.Uint64(p[pageHeaderSize:]), pageHeaderSize+8
	}
	if n > uint64(len(p)-int(start))/8 {
		return fmt.Errorf("freelist: page %d: %d entries do not fit", id, n)
	}
	for i := range n {
		if free := le.Uint64(p[start+8*i:]); free < 2 || free >= w.hwm {
			return fmt.Errorf("freelist: page %d: free page %d outside the file's %d pages", id, free, w.hwm)
		}
	}
	return nil
}

// bucket walks a bucket's tree: root > 0 is a page, root == 0 an inline
// bucket whose leaf page is inline.
func (w *pageWalk) bucket(root uint64, inline []byte, depth int) error {
	if depth > maxBucketNesting {
		return errors.New("buckets nested too deep")
	}
	if root == 0 {
		if len(inline) < pageHeaderSize || binary.LittleEndian.Uint16(inline[8:]) != flagLeaf {
			return errors.New("inline bucket: not a leaf page")
		}
		return w.leaf(inline, depth)
	}
	return w.node(root, depth, 0)
}

// node walks the tree below page id.
func (w *pageWalk) node(id uint64, depth, height int) error {
	if height > 64 {
		return fmt.Errorf("page %d: tree deeper than any real one", id)
	}
	p, err := w.page(id, flagBranch|flagLeaf)
	if err != nil {
		return err
	}
	if binary.LittleEndian.Uint16(p[8:]) == flagLeaf {
		return w.leaf(p, depth)
	}
	le := binary.LittleEndian
	n := int(le.Uint16(p[10:]))
	if pageHeaderSize+n*branchElemSize > len(p) {
		return fmt.Errorf("page %d: %d elements do not fit", id, n)
	}
	for i := range n {
		at := pageHeaderSize + i*branchElemSize
		e := p[at : at+branchElemSize]
		pos, ksize := int(le.Uint32(e)), int(le.Uint32(e[4:]))
		if end := at + pos + ksize; pos < 0 || end > len(p) || end < at {
			return fmt.Errorf("page %d: element %d's key lies outside the page", id, i)
		}
		if err := w.node(le.Uint64(e[8:]), depth, height+1); err != nil {
			return err
		}
	}
	return nil
}

// leaf checks a leaf page's elements and walks the buckets it holds.
func (w *pageWalk) leaf(p []byte, depth int) error {
	le := binary.LittleEndian
	n := int(le.Uint16(p[10:]))
	if pageHeaderSize+n*leafElemSize > len(p) {
		return fmt.Errorf("page %d: %d elements do not fit", le.Uint64(p), n)
	}
	for i := range n {
		at := pageHeaderSize + i*leafElemSize
		e := p[at : at+leafElemSize]
		flags, pos := le.Uint32(e), uint64(le.Uint32(e[4:]))
		ksize, vsize := uint64(le.Uint32(e[8:])), uint64(le.Uint32(e[12:]))
		start := uint64(at) + pos + ksize
		if start+vsize > uint64(len(p)) {
			return fmt.Errorf("page %d: element %d's key or value lies outside the page", le.Uint64(p), i)
		}
		if flags&leafFlagBucket == 0 {
			continue
		}
		v := p[start : start+vsize]
		if len(v) < inBucketSize {
			return fmt.Errorf("page %d: element %d: bucket header too short", le.Uint64(p), i)
		}
		if err := w.bucket(le.Uint64(v), v[inBucketSize:], depth+1); err != nil {
			return err
		}
	}
	return nil
}
