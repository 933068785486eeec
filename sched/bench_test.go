package sched

import (
	"fmt"
	"math/rand"
	"testing"
	"time"
)

// benchSnapshot is a busy cluster: nodes of 32, 64 or 128 CPUs (4 GiB per
// CPU), about 90% of the CPUs held by running jobs ending within two days,
// and a queue of mixed jobs: mostly single-node with 1 to 64 CPUs, 15%
// multi-node (2 to 8 nodes), limits from 10 minutes to 2 days, a fifth
// without a limit (partition default 1 hour).
func benchSnapshot(nodes, pending int, seed int64) Snapshot {
	rng := rand.New(rand.NewSource(seed))
	var ns []Node
	for i := 0; i < nodes; i++ {
		c := []int{32, 64, 128}[rng.Intn(3)]
		ns = append(ns, MakeNode(fmt.Sprintf("node%04d", i)).CPUs(c).Mem(int64(c)*4*GiB).Obj())
	}
	h := NewHarness(nil, ns...)
	h.Snap.Partitions[0].DefaultTime, h.Snap.Partitions[0].MaxTime = time.Hour, 7*24*time.Hour
	id := uint64(1)
	for _, n := range ns {
		free := n.Capacity.CPUs
		for free > n.Capacity.CPUs/10 {
			c := min(free, 1<<rng.Intn(6))
			free -= c
			h.Running(MakeRunning(id).OnRes(n.Name, Resources{CPUs: c, MemBytes: int64(c) * 2 * GiB}).
				Ends(time.Duration(1+rng.Intn(48*60)) * time.Minute).Obj())
			id++
		}
	}
	limits := []time.Duration{10 * time.Minute, 30 * time.Minute, time.Hour, 4 * time.Hour, 12 * time.Hour, 24 * time.Hour, 48 * time.Hour}
	for i := 0; i < pending; i++ {
		c := []int{1, 1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64}[rng.Intn(12)]
		j := MakeJob(id).CPUs(c).Mem(int64(c) * int64(1+rng.Intn(4)) * GiB / 2).
			Prio(int64(rng.Intn(10000))).Submitted(T0.Add(-time.Duration(rng.Intn(86400)) * time.Second))
		if rng.Intn(100) < 15 {
			j.Nodes(2 + rng.Intn(7))
		}
		if rng.Intn(5) != 0 {
			j.Time(limits[rng.Intn(len(limits))] + time.Duration(rng.Intn(600))*time.Second)
		}
		h.Pending(j.Obj())
		id++
	}
	return h.Snap
}

// BenchmarkPlan is the speed target: a full conservative plan of 10,000 and
// 50,000 pending jobs on 1,000 nodes. Run:
//
//	go test ./sched -run '^$' -bench 'BenchmarkPlan$' -benchtime 3x
func BenchmarkPlan(b *testing.B) {
	for _, pending := range []int{10000, 50000} {
		s := benchSnapshot(1000, pending, 1)
		b.Run(fmt.Sprintf("nodes=1000/pending=%d", pending), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				Backfill{}.Plan(s)
			}
		})
	}
}

// BenchmarkPlanScaling measures how a conservative plan's cost grows with
// queue length and node count, and compares the modes at 1,000 nodes. Run:
//
//	go test ./sched -run '^$' -bench 'BenchmarkPlanScaling' -benchtime 2x
func BenchmarkPlanScaling(b *testing.B) {
	run := func(mode Mode, nodes, pending int) {
		s := benchSnapshot(nodes, pending, 1)
		b.Run(fmt.Sprintf("mode=%s/nodes=%d/pending=%d", mode, nodes, pending), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				Backfill{Mode: mode}.Plan(s)
			}
		})
	}
	for _, nodes := range []int{100, 1000, 4000} {
		for _, pending := range []int{1000, 10000, 50000} {
			run(Conservative, nodes, pending)
		}
	}
	for _, mode := range []Mode{EASY, FCFS} {
		for _, pending := range []int{10000, 50000} {
			run(mode, 1000, pending)
		}
	}
}
