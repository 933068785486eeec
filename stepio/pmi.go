package stepio

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
)

// The PMI frames of an `srun --mpi=pmi2` step (package pmi): a node's
// runner sends its ranks' puts when they all entered a fence (Fence),
// srun answers every node with the merged puts once all nodes did
// (FenceDone), and an abort (MPI_Abort) goes from the runner to srun and
// from srun to the other nodes (Abort). They are sent only for such a
// step, so a runner and an srun that do not know them never see them.
//
// A fence's puts may exceed one frame: they travel as one or more frames
// of the same kind, each with the fence's sequence number and a flag
// that is set on the last; the entries (key and value, each a 4-byte
// length and its bytes) are never split between frames.
const (
	Fence     Kind = 'F' // runner → srun: a fence's puts from this node
	FenceDone Kind = 'G' // srun → runner: a fence's puts from every node
	Abort     Kind = 'A' // both ways: a rank aborted the step; payload is AbortStatus
)

// fenceHeader is the sequence number (4 bytes) and the last flag (1).
const fenceHeader = 5

// FenceFrames encodes a fence's puts as frames of kind (Fence or
// FenceDone), keys in order. An entry too large for one frame is an
// error (the PMI server bounds keys and values far below it).
func FenceFrames(kind Kind, seq int, kvs map[string]string) ([]Frame, error) {
	keys := slices.Sorted(maps.Keys(kvs))
	var frames []Frame
	cur := newFencePayload(seq)
	for _, k := range keys {
		v := kvs[k]
		n := 8 + len(k) + len(v)
		if fenceHeader+n > MaxPayload {
			return nil, fmt.Errorf("stepio: fence entry %q of %d bytes does not fit a frame", k, n)
		}
		if len(cur)+n > MaxPayload {
			frames = append(frames, Frame{Kind: kind, Task: AllTasks, Payload: cur})
			cur = newFencePayload(seq)
		}
		cur = binary.BigEndian.AppendUint32(cur, uint32(len(k)))
		cur = append(cur, k...)
		cur = binary.BigEndian.AppendUint32(cur, uint32(len(v)))
		cur = append(cur, v...)
	}
	cur[4] = 1
	return append(frames, Frame{Kind: kind, Task: AllTasks, Payload: cur}), nil
}

func newFencePayload(seq int) []byte {
	p := make([]byte, fenceHeader, 4096)
	binary.BigEndian.PutUint32(p, uint32(seq))
	return p
}

// DecodeFence reads one Fence or FenceDone frame's payload into kvs: its
// fence's sequence number and whether it is the fence's last frame.
func DecodeFence(p []byte, kvs map[string]string) (seq int, last bool, err error) {
	if len(p) < fenceHeader || p[4] > 1 {
		return 0, false, fmt.Errorf("%w: fence payload of %d bytes", ErrFrame, len(p))
	}
	seq, last = int(binary.BigEndian.Uint32(p)), p[4] == 1
	rest := p[fenceHeader:]
	next := func() (string, bool) {
		if len(rest) < 4 {
			return "", false
		}
		n := binary.BigEndian.Uint32(rest)
		if uint64(n) > uint64(len(rest)-4) {
			return "", false
		}
		s := string(rest[4 : 4+n])
		rest = rest[4+n:]
		return s, true
	}
	for len(rest) > 0 {
		k, ok := next()
		v, ok2 := next()
		if !ok || !ok2 {
			return 0, false, fmt.Errorf("%w: a fence entry cut short", ErrFrame)
		}
		kvs[k] = v
	}
	return seq, last, nil
}

// AbortStatus is an Abort frame's payload: the rank that aborted, the
// exit code it gave, and its message.
type AbortStatus struct {
	Rank    int
	Code    int
	Message string
}

// AbortFrame carries a.
func AbortFrame(a AbortStatus) Frame {
	p := binary.BigEndian.AppendUint32(nil, uint32(int32(a.Rank)))
	p = binary.BigEndian.AppendUint32(p, uint32(int32(a.Code)))
	p = append(p, a.Message...)
	if len(p) > MaxPayload {
		p = p[:MaxPayload]
	}
	return Frame{Kind: Abort, Task: AllTasks, Payload: p}
}

// DecodeAbort reads an Abort frame's payload.
func DecodeAbort(p []byte) (AbortStatus, error) {
	if len(p) < 8 {
		return AbortStatus{}, fmt.Errorf("%w: abort payload of %d bytes", ErrFrame, len(p))
	}
	return AbortStatus{
		Rank:    int(int32(binary.BigEndian.Uint32(p))),
		Code:    int(int32(binary.BigEndian.Uint32(p[4:]))),
		Message: string(p[8:]),
	}, nil
}
