package sim

import (
	"math"
	"math/rand/v2"
	"strconv"
)

// synthTrace is a deterministic synthetic workload of n jobs on procs
// processors, for benchmarks: Poisson arrivals at the rate that offers
// load (busy fraction) of the machine, widths a power of two up to a
// quarter of the machine (half the jobs serial), run times log-uniform
// from 10 s to a day, requests 1 to 5 times the run (at most 36 h), and
// 200 users, a few of them heavy.
func synthTrace(n, procs int, load float64, seed uint64) *Trace {
	rng := rand.New(rand.NewPCG(seed, 15))
	type shape struct{ run, procs int64 }
	shapes := make([]shape, n)
	var work float64
	for i := range shapes {
		w := int64(1)
		if rng.IntN(2) == 1 {
			w = int64(1) << rng.IntN(int(math.Log2(float64(procs/4)))+1)
		}
		run := int64(math.Exp(math.Log(10) + rng.Float64()*(math.Log(86400)-math.Log(10))))
		shapes[i] = shape{run, w}
		work += float64(run * w)
	}
	gap := work / float64(n) / (load * float64(procs)) // mean interarrival
	tr := &Trace{Header: map[string]string{"MaxProcs": strconv.Itoa(procs)}}
	t := 0.0
	for i, s := range shapes {
		t += rng.ExpFloat64() * gap
		req := min(int64(float64(s.run)*(1+4*rng.Float64())), 36*3600)
		user := int64(1 + rng.IntN(200))
		if rng.IntN(4) == 0 {
			user = int64(1 + rng.IntN(5)) // heavy users
		}
		tr.Jobs = append(tr.Jobs, Job{ID: int64(i + 1), Submit: int64(t), Wait: -1, Run: min(s.run, req),
			Procs: s.procs, AvgCPU: -1, Memory: -1, ReqProcs: s.procs, ReqTime: max(req, 1), ReqMemory: -1,
			Status: 1, User: user, Group: user, Executable: -1, Queue: -1, Partition: -1,
			PrecedingID: -1, ThinkTime: -1})
	}
	return tr
}
