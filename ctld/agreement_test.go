package ctld

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/lifecycle"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/sched"
)

// agreementQueue fills a controller with a random cluster and queue:
// nodes (some down), running jobs and array tasks, array remainders with
// and without %N, pending jobs of two users and two accounts (some held,
// some singletons, some of a partition no longer configured, some with
// -w, -x or -C) and random policies. The caller holds cycleMu, so no cycle runs meanwhile.
func agreementQueue(t *testing.T, rng *rand.Rand, s *Server, now time.Time) {
	t.Helper()
	users := []string{"alice", "bob"}
	accounts := []string{"", "physics"}
	names := []string{"a", "b", "solo"}
	pick := func(xs []string) string { return xs[rng.Intn(len(xs))] }
	s.mu.Lock()
	defer s.mu.Unlock()
	free := map[string]int{}
	var up []string
	for i := 0; i < 2+rng.Intn(4); i++ {
		name := fmt.Sprintf("n%d", i)
		cpus := 2 + rng.Intn(7)
		n := &node{rec: store.NodeRecord{Name: name, CPUs: cpus, MemBytes: 64 << 30}, up: rng.Intn(6) != 0,
			parts: s.parts.of(name), seen: now}
		s.nodes.put(name, n)
		if n.up {
			free[name] = cpus
			up = append(up, name)
		}
	}
	// Every record is in the store, as submits would have left it: the
	// cycle commits its starts.
	add := func(rec api.Job) {
		r := &store.JobRecord{Job: rec}
		if rec.ID == 0 {
			if _, err := s.store.AddJob(r); err != nil {
				t.Fatal(err)
			}
		} else if err := s.store.Apply(store.Update{Jobs: []*store.JobRecord{r}}); err != nil {
			t.Fatal(err)
		}
		j := &job{rec: *r}
		s.q.track(j)
	}
	running := func(job api.Job) bool {
		if len(up) == 0 {
			return false
		}
		n := up[rng.Intn(len(up))]
		if free[n] < job.CPUs {
			return false
		}
		free[n] -= job.CPUs
		start := now.Add(-time.Duration(1+rng.Intn(60)) * time.Minute)
		job.State, job.Nodes, job.StartTime = api.StateRunning, []string{n}, &start
		add(job)
		return true
	}
	spec := func() api.Job {
		user := rng.Intn(len(users))
		job := api.Job{User: users[user], UID: uint32(1000 + user), Name: pick(names), Partition: "batch",
			CPUs: 1 + rng.Intn(3), MemBytes: 1 << 30, NodeCount: 1, TimeLimit: int64(600 * (1 + rng.Intn(12))),
			SubmitTime: now.Add(-time.Duration(rng.Intn(3600)) * time.Second)}
		job.Spec.Account = pick(accounts)
		if rng.Intn(3) == 0 {
			job.Partition = "small"
		}
		if rng.Intn(3) == 0 {
			job.Spec.Dependency = &api.Dependency{Conditions: []api.DependencyCondition{{Type: api.DependSingleton}}}
		}
		job.Spec.Nice = rng.Intn(3) * 100
		job.Spec.Partition = job.Partition
		switch rng.Intn(7) { // -w, -x or -C: the snapshot resolves them alike for both
		case 0:
			job.Spec.NodeList = []string{fmt.Sprintf("n%d", rng.Intn(6))}
		case 1:
			job.Spec.Exclude = []string{fmt.Sprintf("n%d", rng.Intn(6)), fmt.Sprintf("n%d", rng.Intn(6))}
		case 2:
			job.Spec.Constraint = "fast"
		}
		return job
	}
	for i := rng.Intn(6); i > 0; i-- {
		running(spec())
	}
	for i := rng.Intn(3); i > 0; i-- {
		job := spec()
		job.Spec.Dependency = nil
		job.State = api.StatePending
		count := 3 + rng.Intn(8)
		arr := &api.JobArray{Ranges: []api.ArrayRange{{First: 0, Last: count - 1, Step: 1}}, MaxRunning: rng.Intn(4)}
		job.Spec.Array = arr
		rem := &store.ArrayRecord{Job: job, Tasks: count, Pending: arr.Ranges}
		base, err := s.store.AddArray(rem)
		if err != nil {
			t.Fatal(err)
		}
		ran := 0
		for ; ran < count-1 && rng.Intn(2) == 0; ran++ {
			task := job
			task.ID, task.ArrayJobID, task.ArrayTaskID = base+uint64(ran), base, &[]int{ran}[0]
			if !running(task) {
				break
			}
		}
		rem.Pending = []api.ArrayRange{{First: ran, Last: count - 1, Step: 1}}
		if err := s.store.Apply(store.Update{Arrays: []*store.ArrayRecord{rem}}); err != nil {
			t.Fatal(err)
		}
		a := newArrayJob(base, arr)
		a.rem, a.remCount = rem, count-ran
		s.q.addArray(a)
	}
	for i := 1 + rng.Intn(12); i > 0; i-- {
		job := spec()
		job.State = api.StatePending
		switch rng.Intn(12) {
		case 0:
			job.Hold = lifecycle.HoldUser
		case 1:
			job.Partition = "gone" // removed from the configuration since
		}
		add(job)
	}
	for _, u := range users {
		if rng.Intn(2) == 0 {
			l := api.Limits{MaxRunningJobs: rng.Intn(3), MaxCPUs: rng.Intn(6)}
			if err := s.policies.Put(api.Policy{Kind: api.PolicyUser, Name: u, Limits: l}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if rng.Intn(2) == 0 {
		l := api.Limits{MaxCPUs: 1 + rng.Intn(8)}
		if err := s.policies.Put(api.Policy{Kind: api.PolicyAccount, Name: "physics", Limits: l}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPropertyTestOnlyAgreesWithCycle: on random queues, a test-only
// submit and a real cycle with the same job queued decide alike: both
// start it now, or both leave it pending with the same reason. This is
// what the one snapshot builder buys: PartitionDown, holds,
// dependencies, %N, singletons and policy limits are all decided in the
// same place for both.
func TestPropertyTestOnlyAgreesWithCycle(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	modes := []sched.Mode{sched.Conservative, sched.EASY, sched.FCFS}
	for round := 0; round < 40; round++ {
		mode := modes[round%len(modes)]
		t.Run(fmt.Sprintf("%d/%s", round, mode), func(t *testing.T) {
			tc := MustServer(t, eventsOnly, withPartitions("PartitionName=batch Nodes=ALL Default=YES\nPartitionName=small Nodes=n[0-1]\nNodeName=n[0-2] Features=fast\n"))
			s := tc.srv
			s.planner = sched.Backfill{Mode: mode}
			s.cycleMu.Lock()
			defer s.cycleMu.Unlock()
			// Nothing may start once the test lets cycles run again: the
			// nodes are not real.
			defer func() { s.planner = nopPlanner{} }()
			now := time.Now().Round(0)
			agreementQueue(t, rng, s, now)

			// The probe: an existing pending job's owner (so the
			// fairshare tree is the same with and without it), a new job.
			s.mu.RLock()
			var owners []api.Job
			for _, j := range s.q.active {
				if j.state() == api.StatePending {
					owners = append(owners, j.rec.Job)
				}
			}
			s.mu.RUnlock()
			if len(owners) == 0 {
				return
			}
			owner := owners[rng.Intn(len(owners))]
			probe := api.Job{User: owner.User, UID: owner.UID, Name: []string{"a", "solo"}[rng.Intn(2)],
				Partition: []string{"batch", "small"}[rng.Intn(2)], CPUs: 1 + rng.Intn(4), MemBytes: 1 << 30,
				NodeCount: 1, TimeLimit: int64(600 * (1 + rng.Intn(6))), SubmitTime: now}
			probe.Spec.Account, probe.Spec.Partition = owner.Spec.Account, probe.Partition
			if rng.Intn(2) == 0 {
				probe.Spec.Dependency = &api.Dependency{Conditions: []api.DependencyCondition{{Type: api.DependSingleton}}}
			}
			if rng.Intn(10) == 0 {
				probe.Partition = "gone"
			}
			switch rng.Intn(4) {
			case 0:
				probe.Spec.NodeList = []string{fmt.Sprintf("n%d", rng.Intn(6))}
			case 1:
				probe.Spec.Exclude = []string{"n0"}
			case 2:
				probe.Spec.Constraint = "fast|gpu"
			}

			test := s.planTestLocked(probe, now)
			probe.State = api.StatePending
			rec := &store.JobRecord{Job: probe}
			if _, err := s.store.AddJob(rec); err != nil {
				t.Fatal(err)
			}
			s.mu.Lock()
			j := &job{rec: *rec}
			s.q.track(j)
			s.mu.Unlock()
			s.cycleLocked(now)

			s.mu.RLock()
			got := s.q.jobs[rec.Job.ID].rec.Job
			s.mu.RUnlock()
			testStarts := test.Start != nil && test.Start.Equal(now) && test.Reason == ""
			cycleStarts := got.State == api.StateRunning
			if testStarts != cycleStarts || !testStarts && test.Reason != got.Reason {
				t.Fatalf("test-only: start %v reason %q; cycle: %s reason %q (probe %+v)",
					testStarts, test.Reason, got.State, got.Reason, probe)
			}
			if cycleStarts {
				allowed := allowedNodes(&probe.Spec, got.Nodes, s.parts.features)
				if fmt.Sprint(got.Nodes) != fmt.Sprint(test.Nodes) || allowed != nil && !allowed[got.Nodes[0]] {
					t.Fatalf("cycle started the probe on %v, test-only said %v (-w %v, -x %v)",
						got.Nodes, test.Nodes, probe.Spec.NodeList, probe.Spec.Exclude)
				}
			}
		})
	}
}

// nopPlanner starts nothing.
type nopPlanner struct{}

func (nopPlanner) Plan(sched.Snapshot) sched.Plan { return sched.Plan{} }
