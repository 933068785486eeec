package ctld

import (
	"slices"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/gpu"
)

// The GPUs the queue's jobs hold, read from their allocations.

// heldGPUs is what running jobs, and finished ones still completing,
// hold of each node's devices.
func (q *queue) heldGPUs() map[string][]gpu.Holding {
	held := make(map[string][]gpu.Holding)
	for _, j := range q.runningJobs() {
		job := &j.rec.Job
		for _, a := range job.GPUAlloc {
			for _, sh := range gpu.SharesFromAPI(a.Shares) {
				held[a.Node] = append(held[a.Node], gpu.Holding{UID: job.UID, Share: sh})
			}
		}
	}
	for _, j := range q.completingJobs() {
		job := &j.rec.Job
		for _, a := range job.GPUAlloc {
			if slices.Contains(j.completingOn, a.Node) {
				for _, sh := range gpu.SharesFromAPI(a.Shares) {
					held[a.Node] = append(held[a.Node], gpu.Holding{UID: job.UID, Share: sh})
				}
			}
		}
	}
	return held
}

// addGPULaunchOn tells a node of the job its shares there.
func addGPULaunchOn(j *job, host string, req *api.LaunchRequest) {
	for _, a := range j.rec.Job.GPUAlloc {
		if a.Node == host {
			req.GPUs, req.FGPUPerGPUHundredths = a.Shares, a.FGPUPerGPUHundredths
		}
	}
}

// gpuJobs lists, per node and device, the jobs holding it: running, or
// finished and still completing there.
func (q *queue) gpuJobs() map[string]map[int][]uint64 {
	out := map[string]map[int][]uint64{}
	holders := func(yield func(uint64, *job) bool) {
		for id, j := range q.runningJobs() {
			if !yield(id, j) {
				return
			}
		}
		for id, j := range q.completingJobs() {
			if !yield(id, j) {
				return
			}
		}
	}
	for id, j := range holders {
		for _, a := range j.rec.Job.GPUAlloc {
			if j.state().Terminal() && !slices.Contains(j.completingOn, a.Node) {
				continue
			}
			if out[a.Node] == nil {
				out[a.Node] = map[int][]uint64{}
			}
			for _, sh := range a.Shares {
				out[a.Node][sh.Device] = append(out[a.Node][sh.Device], id)
			}
		}
	}
	for _, devs := range out {
		for d := range devs {
			slices.Sort(devs[d])
		}
	}
	return out
}
