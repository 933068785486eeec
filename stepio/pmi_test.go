package stepio

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
)

// TestFenceFrames: puts larger than a frame travel in several, only the
// last flagged, and read back whole.
func TestFenceFrames(t *testing.T) {
	kvs := map[string]string{}
	for i := range 300 {
		kvs[fmt.Sprintf("bc-%d", i)] = strings.Repeat("x", 1000)
	}
	frames, err := FenceFrames(Fence, 7, kvs)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) < 5 {
		t.Fatalf("300 KB of puts in %d frames", len(frames))
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, f := range frames {
		if len(f.Payload) > MaxPayload {
			t.Fatalf("a frame of %d bytes", len(f.Payload))
		}
		w.Write(f)
	}
	got := map[string]string{}
	for i := range frames {
		f, err := Read(&buf)
		if err != nil || f.Kind != Fence {
			t.Fatalf("frame %d: %v %q", i, err, f.Kind)
		}
		seq, last, err := DecodeFence(f.Payload, got)
		if err != nil || seq != 7 || last != (i == len(frames)-1) {
			t.Fatalf("frame %d: seq %d last %v %v", i, seq, last, err)
		}
	}
	if !maps.Equal(got, kvs) {
		t.Error("the puts read back differ")
	}

	empty, _ := FenceFrames(FenceDone, 0, nil)
	seq, last, err := DecodeFence(empty[0].Payload, map[string]string{})
	if len(empty) != 1 || seq != 0 || !last || err != nil {
		t.Errorf("an empty fence: %d frames, seq %d, last %v, %v", len(empty), seq, last, err)
	}
}

func TestDecodeFenceBad(t *testing.T) {
	for _, p := range [][]byte{
		nil, {0, 0, 0, 1}, {0, 0, 0, 1, 2},
		{0, 0, 0, 1, 1, 0, 0, 0, 5, 'a'},                // key cut short
		{0, 0, 0, 1, 1, 0, 0, 0, 1, 'a'},                // no value
		{0, 0, 0, 1, 1, 0, 0, 0, 1, 'a', 0, 0, 0, 9, 1}, // value cut short
	} {
		if _, _, err := DecodeFence(p, map[string]string{}); !errors.Is(err, ErrFrame) {
			t.Errorf("DecodeFence(%v): %v, want ErrFrame", p, err)
		}
	}
}

func TestAbortFrame(t *testing.T) {
	a := AbortStatus{Rank: 3, Code: 42, Message: "application called MPI_Abort"}
	got, err := DecodeAbort(AbortFrame(a).Payload)
	if err != nil || got != a {
		t.Errorf("abort reads back as %+v, %v", got, err)
	}
	if _, err := DecodeAbort([]byte{1, 2}); !errors.Is(err, ErrFrame) {
		t.Errorf("a short abort: %v", err)
	}
}
