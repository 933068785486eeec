package ctld

import (
	"slices"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/gpu"
)

// The GPUs the queue's jobs hold, read from their allocations.

// heldGPUs is what running jobs, and the parts of ended runs still
// stopping, hold of each node's devices.
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
	for k, p := range q.stoppingParts() {
		held[k.node] = append(held[k.node], p.heldGPUs(k.node)...)
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
// with a part still stopping there.
func (q *queue) gpuJobs() map[string]map[int][]uint64 {
	out := map[string]map[int][]uint64{}
	add := func(node string, dev int, id uint64) {
		if out[node] == nil {
			out[node] = map[int][]uint64{}
		}
		out[node][dev] = append(out[node][dev], id)
	}
	for id, j := range q.runningJobs() {
		for _, a := range j.rec.Job.GPUAlloc {
			for _, sh := range a.Shares {
				add(a.Node, sh.Device, id)
			}
		}
	}
	for k, p := range q.stoppingParts() {
		for _, dev := range p.gpuDevices(k.node) {
			add(k.node, dev, k.id)
		}
	}
	for _, devs := range out {
		for d := range devs {
			slices.Sort(devs[d])
		}
	}
	return out
}
