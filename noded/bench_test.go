package noded

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/noded/nodedtest"
)

// BenchmarkCancelToEnded measures how long after a cancel reaches noded
// ctld receives the job's end: the noded share of the time from "a
// resource is freed" to "the next job runs". It reports launch-to-started
// too.
func BenchmarkCancelToEnded(b *testing.B) {
	ctld := nodedtest.NewFakeCtld(b, testKey)
	n := mustNode(b, ctld, "")
	<-n.d.Registered()
	var started, ended time.Duration
	for i := 0; i < b.N; i++ {
		req := n.launchReq("sleep 100\n")
		t0 := time.Now()
		n.launch(b, req)
		ctld.Started(req.JobID)
		t1 := time.Now()
		if err := n.client.Do(context.Background(), http.MethodPost, "/v1/signal", api.SignalRequest{JobID: req.JobID}, nil); err != nil {
			b.Fatal(err)
		}
		ctld.Ended(req.JobID)
		started += t1.Sub(t0)
		ended += time.Since(t1)
	}
	b.ReportMetric(float64(started.Microseconds())/float64(b.N)/1000, "ms-launch-to-started")
	b.ReportMetric(float64(ended.Microseconds())/float64(b.N)/1000, "ms-cancel-to-ended")
}
