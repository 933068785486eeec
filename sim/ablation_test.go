package sim

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/priority"
	"github.com/corral-hpc/corral/sched"
)

// TestAblation replays traces under policies spelled as comma-separated
// choices, to measure each design choice of the default policy on its
// own (docs/scheduling.md). It is a measuring tool, not a check: it runs
// only when asked, e.g.
//
//	CORRAL_ABLATION='easy;easy,fairshare,guard=12h' \
//	CORRAL_TRACES=../shared/traces/KTH-SP2-filtered.swf go test ./sim -run Ablation -v
//
// Choices: easy or conservative; order=priority|shortest|area|slowdown;
// guard=DURATION (BackfillGuardAfter); predict (expected run times order
// backfill); fairshare (the stock multifactor priority instead of FCFS);
// maxage=DURATION; guardk=N (GuardReserve); size=N (the size weight);
// favorsmall.
func TestAblation(t *testing.T) {
	spec, traces := os.Getenv("CORRAL_ABLATION"), os.Getenv("CORRAL_TRACES")
	if spec == "" || traces == "" {
		t.Skip("a measuring tool: set CORRAL_ABLATION and CORRAL_TRACES to run it")
	}
	for _, name := range strings.Split(spec, ";") {
		pol, err := ablationSetup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range strings.Split(traces, ",") {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := ParseSWF(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			res, err := runWith(tr, Config{Policy: Policy(name)}, pol)
			if err != nil {
				t.Fatal(err)
			}
			m := res.Metrics
			fmt.Printf("%-45s %-22s bsld %8.2f  wait %9.0f  max %9d  util %.4f  jain %.3f\n",
				name, path[strings.LastIndex(path, "/")+1:], m.MeanBSLD, m.MeanWait, m.MaxWait, m.Utilization, m.Fairness)
		}
	}
}

func ablationSetup(name string) (setup, error) {
	s := setup{priority: fcfsPriority()}
	b := sched.Backfill{Mode: sched.EASY, StartsOnly: true}
	var maxAge time.Duration
	size := int64(-1)
	favorSmall := false
	for _, f := range strings.Split(name, ",") {
		key, val, _ := strings.Cut(f, "=")
		var err error
		switch key {
		case "easy", "conservative":
			b.Mode, err = sched.ParseMode(key)
		case "order":
			b.Order, err = sched.ParseOrder(val)
		case "guard":
			b.GuardAfter, err = time.ParseDuration(val)
		case "predict":
			s.predict = true
		case "fairshare":
			s.priority = priority.DefaultConfig()
		case "maxage":
			maxAge, err = time.ParseDuration(val)
		case "guardk":
			b.GuardReserve, err = strconv.Atoi(val)
		case "size":
			size, err = strconv.ParseInt(val, 10, 64)
		case "favorsmall":
			favorSmall = true
		default:
			err = fmt.Errorf("unknown choice %q", f)
		}
		if err != nil {
			return s, err
		}
	}
	if maxAge > 0 {
		s.priority.MaxAge = maxAge
	}
	if size >= 0 {
		s.priority.Weights.Size = size
	}
	s.priority.FavorSmall = s.priority.FavorSmall || favorSmall
	s.planner = b
	return s, nil
}
