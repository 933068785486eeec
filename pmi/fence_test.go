package pmi

import (
	"maps"
	"strings"
	"testing"
)

func TestFencesMerge(t *testing.T) {
	f := NewFences([]string{"n1", "n2"})
	if _, done, err := f.Add("n1", 0, map[string]string{"a": "1"}); done || err != nil {
		t.Fatalf("first node: done %v, %v", done, err)
	}
	merged, done, err := f.Add("n2", 0, map[string]string{"b": "2"})
	if !done || err != nil || !maps.Equal(merged, map[string]string{"a": "1", "b": "2"}) {
		t.Fatalf("second node: %v %v %v", merged, done, err)
	}
	// The next fence is 1; a node's puts of fence 0 are not carried over.
	if _, _, err := f.Add("n1", 0, nil); err == nil {
		t.Error("fence 0 again was taken")
	}
	if _, _, err := f.Add("n1", 1, map[string]string{"c": "3"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.Add("n1", 1, nil); err == nil {
		t.Error("a node entered fence 1 twice")
	}
	if _, _, err := f.Add("n3", 1, nil); err == nil {
		t.Error("a node outside the step entered")
	}
	merged, done, _ = f.Add("n2", 1, nil)
	if !done || !maps.Equal(merged, map[string]string{"c": "3"}) {
		t.Errorf("fence 1: %v %v", merged, done)
	}
}

// TestFencesNodeGone: a node whose tasks end while the others wait in a
// fence it has not entered makes the fence fail (srun then ends the
// step); a node that ends between fences fails only the next one.
func TestFencesNodeGone(t *testing.T) {
	f := NewFences([]string{"n1", "n2", "n3"})
	f.Add("n1", 0, nil)
	f.Add("n2", 0, nil)
	if err := f.Gone("n3"); err == nil || !strings.Contains(err.Error(), "n3") {
		t.Errorf("a node gone in the middle of a fence: %v", err)
	}

	f = NewFences([]string{"n1", "n2"})
	if err := f.Gone("n2"); err != nil {
		t.Errorf("a node gone between fences: %v", err)
	}
	if _, done, err := f.Add("n1", 0, nil); done || err == nil {
		t.Errorf("a fence after a node ended: done %v, %v", done, err)
	}
	if _, _, err := f.Add("n2", 0, nil); err == nil {
		t.Error("a gone node entered a fence")
	}
}
