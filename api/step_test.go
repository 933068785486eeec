package api

import (
	"errors"
	"testing"
	"time"
)

func TestStepCredential(t *testing.T) {
	key := []byte("cluster-key")
	now := time.Unix(1000, 0)
	c := StepCredential{JobID: 7, StepID: 0, UID: 1000, GID: 1000, Tasks: 4,
		Layout:  []StepNode{{Node: "dev1", Ranks: []int{0, 1}}, {Node: "dev2", Ranks: []int{2, 3}}},
		Expires: now.Add(time.Minute)}
	SignCredential(&c, key)
	n, err := VerifyCredential(&c, key, "dev2", now)
	if err != nil || n.Node != "dev2" || len(n.Ranks) != 2 || n.Ranks[0] != 2 {
		t.Fatalf("VerifyCredential = %+v, %v", n, err)
	}
	bad := func(name string, c StepCredential, key []byte, node string, at time.Time) {
		t.Helper()
		if _, err := VerifyCredential(&c, key, node, at); !errors.Is(err, ErrBadCredential) {
			t.Errorf("%s: %v, want ErrBadCredential", name, err)
		}
	}
	bad("other node", c, key, "dev3", now)
	bad("expired", c, key, "dev1", now.Add(time.Minute))
	bad("other key", c, []byte("nope"), "dev1", now)
	forged := c
	forged.UID = 0
	bad("changed uid", forged, key, "dev1", now)
	forged = c
	forged.Layout = append([]StepNode{{Node: "dev9", Ranks: []int{0}}}, c.Layout...)
	bad("added node", forged, key, "dev9", now)
	if StepName(StepBatch) != "batch" || StepName(StepExtern) != "extern" || StepName(3) != "3" {
		t.Error("StepName")
	}
}
