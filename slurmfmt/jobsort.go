package slurmfmt

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
)

// SqueueSort is squeue's default order: partition, then state, then
// priority, highest first (squeue(1), -S).
const SqueueSort = "P,t,-p"

// stateRank orders states as Slurm's enum does (pending first).
var stateRank = map[api.JobState]int{
	api.StatePending: 0, api.StateRunning: 1, api.StateSuspended: 2, api.StateCompleted: 3, api.StateCancelled: 4,
	api.StateFailed: 5, api.StateTimeout: 6, api.StateNodeFail: 7, api.StateOutOfMemory: 11,
}

// jobSortKeys compare two jobs by one squeue -S letter.
var jobSortKeys = map[byte]func(a, b *api.Job, now time.Time) int{
	'i': func(a, b *api.Job, _ time.Time) int { return cmp.Compare(a.ID, b.ID) },
	'A': func(a, b *api.Job, _ time.Time) int { return cmp.Compare(a.ID, b.ID) },
	'j': func(a, b *api.Job, _ time.Time) int { return strings.Compare(a.Name, b.Name) },
	'u': func(a, b *api.Job, _ time.Time) int { return strings.Compare(a.User, b.User) },
	'U': func(a, b *api.Job, _ time.Time) int { return cmp.Compare(a.UID, b.UID) },
	'P': func(a, b *api.Job, _ time.Time) int { return strings.Compare(a.Partition, b.Partition) },
	't': func(a, b *api.Job, _ time.Time) int { return cmp.Compare(stateRank[a.State], stateRank[b.State]) },
	'T': func(a, b *api.Job, _ time.Time) int { return cmp.Compare(stateRank[a.State], stateRank[b.State]) },
	'p': func(a, b *api.Job, _ time.Time) int { return cmp.Compare(priority(a), priority(b)) },
	'Q': func(a, b *api.Job, _ time.Time) int { return cmp.Compare(priority(a), priority(b)) },
	'M': func(a, b *api.Job, now time.Time) int { return cmp.Compare(a.Elapsed(now), b.Elapsed(now)) },
	'l': func(a, b *api.Job, _ time.Time) int { return cmp.Compare(a.TimeLimit, b.TimeLimit) },
	'D': func(a, b *api.Job, _ time.Time) int { return cmp.Compare(jobNodes(a), jobNodes(b)) },
	'C': func(a, b *api.Job, _ time.Time) int { return cmp.Compare(a.CPUs*jobNodes(a), b.CPUs*jobNodes(b)) },
	'm': func(a, b *api.Job, _ time.Time) int { return cmp.Compare(a.MemBytes, b.MemBytes) },
	'V': func(a, b *api.Job, _ time.Time) int { return a.SubmitTime.Compare(b.SubmitTime) },
	'S': func(a, b *api.Job, _ time.Time) int { return compareTimes(startOf(a), startOf(b)) },
	'e': func(a, b *api.Job, _ time.Time) int { return compareTimes(a.EndTime, b.EndTime) },
	'N': func(a, b *api.Job, _ time.Time) int { return strings.Compare(nodeList(a.Nodes), nodeList(b.Nodes)) },
	'r': func(a, b *api.Job, _ time.Time) int { return strings.Compare(reason(a), reason(b)) },
}

func startOf(j *api.Job) *time.Time {
	if j.StartTime != nil {
		return j.StartTime
	}
	return j.PlannedStart
}

// compareTimes orders unknown times last, as squeue puts N/A last.
func compareTimes(a, b *time.Time) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return a.Compare(*b)
}

// SortJobs orders jobs by an squeue -S spec ("P,t,-p": letters, each
// optionally after + or -, descending with -); ties keep job ID order.
func SortJobs(jobs []api.Job, spec string, now time.Time) error {
	type key struct {
		cmp  func(a, b *api.Job, now time.Time) int
		desc bool
	}
	var keys []key
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		desc := false
		switch {
		case strings.HasPrefix(item, "-"):
			desc, item = true, item[1:]
		case strings.HasPrefix(item, "+"):
			item = item[1:]
		}
		if len(item) != 1 || jobSortKeys[item[0]] == nil {
			return fmt.Errorf("invalid sort specification: %s", item)
		}
		keys = append(keys, key{jobSortKeys[item[0]], desc})
	}
	slices.SortStableFunc(jobs, func(a, b api.Job) int {
		for _, k := range keys {
			if c := k.cmp(&a, &b, now); c != 0 {
				if k.desc {
					return -c
				}
				return c
			}
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return nil
}
