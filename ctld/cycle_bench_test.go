package ctld

import (
	"fmt"
	"io"
	"log"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
)

// BenchmarkScheduleCycle measures one scheduling cycle (snapshot, plan,
// apply) over a long pending queue that cannot start (nodes full).
func BenchmarkScheduleCycle(b *testing.B) {
	for _, pending := range []int{1000, 20000} {
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			tc := MustServer(b, eventsOnly, func(c *Config) { c.Logger = log.New(io.Discard, "", 0) })
			srv := tc.srv
			srv.mu.Lock()
			now := time.Now()
			for i := 1; i <= pending; i++ {
				j := &job{rec: store.JobRecord{Job: api.Job{ID: uint64(i), State: api.StatePending, Partition: "batch",
					CPUs: 1, MemBytes: 1 << 30, NodeCount: 1, SubmitTime: now}}}
				srv.q.track(j)
			}
			srv.mu.Unlock()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				srv.scheduleOnce(time.Now())
			}
		})
	}
}
