package store

import (
	"testing"
	"time"
)

// BenchmarkAddJobParallel measures durable job inserts from 32 goroutines
// sharing commits through DB.Batch.
func BenchmarkAddJobParallel(b *testing.B) {
	s := MustOpen(b, "")
	defer s.Close()
	b.SetParallelism(16)
	rec := newRecord("bench", time.Now())
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := *rec
			if _, err := s.AddJob(&r); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
