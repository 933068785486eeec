package ctld

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/sim"
)

// limitsSWF: five 1-CPU tasks of array 1 limited to two at a time (%2,
// 10 s each), two singletons of user 1 and executable 2 (15 s each) and a
// plain job, all submitted at 0 on 8 processors (corral's SWF extension:
// fields 19-21 are the array, its %N and singleton).
const limitsSWF = `; MaxProcs: 8
1 0 -1 10 1 -1 -1 1 100 -1 1 1 1 1 -1 -1 -1 -1 1 2 0
2 0 -1 10 1 -1 -1 1 100 -1 1 1 1 1 -1 -1 -1 -1 1 2 0
3 0 -1 10 1 -1 -1 1 100 -1 1 1 1 1 -1 -1 -1 -1 1 2 0
4 0 -1 10 1 -1 -1 1 100 -1 1 1 1 1 -1 -1 -1 -1 1 2 0
5 0 -1 10 1 -1 -1 1 100 -1 1 1 1 1 -1 -1 -1 -1 1 2 0
6 0 -1 15 1 -1 -1 1 100 -1 1 1 1 2 -1 -1 -1 -1 0 0 1
7 0 -1 15 1 -1 -1 1 100 -1 1 1 1 2 -1 -1 -1 -1 0 0 1
8 0 -1 5 1 -1 -1 1 100 -1 1 1 1 3 -1 -1 -1 -1 0 0 0
`

// TestSimAndControllerKeepLimitsAlike replays one workload with an
// array's %N limit and a singleton dependency through corral sim and
// through the controller (a fake node ends each job when the replay says
// it ended): at every moment of the replay the controller starts exactly
// the jobs the replay starts then.
func TestSimAndControllerKeepLimitsAlike(t *testing.T) {
	tr, err := sim.ParseSWF(strings.NewReader(limitsSWF))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(tr, sim.Config{Policy: sim.PolicyConservative})
	if err != nil {
		t.Fatal(err)
	}

	tc := MustServer(t, eventsOnly)
	ids := map[int64]uint64{}
	base := tc.submit(arraySpec(t, "arr", "0-4%2"))
	for k := int64(0); k < 5; k++ {
		ids[1+k] = base + uint64(k)
	}
	ids[6] = tc.submit(dependent(t, "solo", "singleton"))
	ids[7] = tc.submit(dependent(t, "solo", "singleton"))
	ids[8] = tc.submit(script("plain"))
	node := newFakeNode(tc, "n1", 8, 8<<30)
	node.register()

	var moments []int64
	for _, r := range res.Records {
		moments = append(moments, r.Start, r.End)
	}
	slices.Sort(moments)
	for _, at := range slices.Compact(moments) {
		for _, r := range res.Records {
			if r.End == at {
				if err := node.end(ids[r.ID], api.StateCompleted, 0); err != nil {
					t.Fatal(err)
				}
			}
		}
		var want []uint64
		for _, r := range res.Records {
			if r.Start == at {
				want = append(want, ids[r.ID])
			}
		}
		slices.Sort(want)
		if got := node.launchedIDs(len(want)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("at %d s the replay starts %v, the controller %v", at, want, got)
		}
		time.Sleep(50 * time.Millisecond)
		tc.srv.Kick()
		time.Sleep(50 * time.Millisecond)
		node.noLaunch()
	}
	if len(res.Records) != 8 {
		t.Fatalf("the replay ran %d jobs of 8", len(res.Records))
	}
}
