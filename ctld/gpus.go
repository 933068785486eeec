package ctld

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/gpu"
	"github.com/corral-hpc/corral/jobspec"
	"github.com/corral-hpc/corral/sched"
)

// Fractional GPUs in the controller (docs/gpu.md). Nodes report their
// devices and, optionally, what one of them is worth (--fgpu-per-gpu);
// the node's own value wins, else the first partition holding the node
// that sets FGPUPerGPU, else 1. A job asks for a fraction per node
// (Job.FGPUHundredths, from --fgpu) or for whole GPUs per node (Job.GPUs,
// from --gpus, --gres=gpu, --gpus-per-node or --gpus-per-task, of the
// model Job.GPUType matches); the planner places it per device, and the
// shares it holds are recorded on the job (Job.GPUAlloc) with its start,
// so they survive a restart and are sent to the node with the launch.

// perGPU is what one GPU of the node is worth: its own setting, else the
// first partition naming it that sets one, else the default.
func (n *node) perGPU(parts partitions) gpu.Hundredths {
	if h := gpu.Hundredths(n.rec.FGPUPerGPUHundredths); h > 0 {
		return h
	}
	for _, p := range parts.list {
		if p.FGPUPerGPUHundredths > 0 && parts.contains(p.Name, n.rec.Name) {
			return gpu.Hundredths(p.FGPUPerGPUHundredths)
		}
	}
	return gpu.DefaultPerGPU
}

// addGPUsTo gives a snapshot node its devices.
func (n *node) addGPUsTo(sn *sched.Node, parts partitions) {
	if len(n.gpus) == 0 {
		return
	}
	per := n.perGPU(parts)
	sn.GPUs, sn.FGPUPerGPU = n.gpus, per
	sn.Capacity.FGPU = int(gpu.NodeCapacity(n.gpus, per))
}

// sharesOn are the shares a job holds on one node.
func sharesOn(job *api.Job, node string) []gpu.Share {
	for _, a := range job.GPUAlloc {
		if a.Node == node {
			return gpu.SharesFromAPI(a.Shares)
		}
	}
	return nil
}

// addRunningGPUs gives a snapshot's running job its user and shares.
func addRunningGPUs(r *sched.Running, job *api.Job) {
	r.UID = job.UID
	if len(job.GPUAlloc) == 0 {
		return
	}
	for i := range r.Alloc {
		r.Alloc[i].GPUs = sharesOn(job, r.Alloc[i].Node)
	}
}

// gpuPending gives a snapshot's pending job its GPU request: the planner
// adds whole GPUs at each node's worth itself.
func gpuPending(job *api.Job, p *sched.Pending) {
	p.UID, p.GPUs, p.GPUType = job.UID, job.GPUs, job.GPUType
	p.PerNode.FGPU = job.FGPUHundredths
}

// wantsGPUs says whether a job asks for any GPU.
func wantsGPUs(job *api.Job) bool { return job.FGPUHundredths > 0 || job.GPUs > 0 }

// jobFGPUPerNode is the fGPU a job holds on each node while it runs (the
// most on any of its nodes), else what it asks for, whole GPUs counted at
// one fGPU each (their worth depends on the node).
func jobFGPUPerNode(job *api.Job) int {
	if !wantsGPUs(job) && len(job.GPUAlloc) == 0 {
		// Not resolved yet (a spec being checked): from the options.
		n, _, _ := jobspec.PerNodeGPUs(&job.Spec)
		return job.Spec.FGPUHundredths + int(gpu.GPUs(int(n), gpu.DefaultPerGPU))
	}
	if len(job.GPUAlloc) > 0 {
		most := 0
		for _, a := range job.GPUAlloc {
			most = max(most, int(gpu.Total(gpu.SharesFromAPI(a.Shares))))
		}
		return most
	}
	return job.FGPUHundredths + int(gpu.GPUs(job.GPUs, gpu.DefaultPerGPU))
}

// startGPUs checks a start's shares against the devices as they are
// now (held: what running jobs and this cycle's earlier starts hold) and
// returns the job's allocation record; ok is false when a share no longer
// fits or a GPU job came without the shares its nodes need.
func (r *nodeRegistry) startGPUs(job *api.Job, st sched.Start, held map[string][]gpu.Holding, parts partitions) ([]api.NodeGPUs, bool) {
	if !wantsGPUs(job) {
		return nil, true
	}
	var alloc []api.NodeGPUs
	for i, name := range st.Nodes {
		n := r.get(name)
		if n == nil || len(n.gpus) == 0 || i >= len(st.GPUs) || len(st.GPUs[i]) == 0 {
			return nil, false
		}
		per := n.perGPU(parts)
		view := gpu.FreeOf(n.gpus, held[name], per)
		for _, sh := range st.GPUs[i] {
			k := slices.IndexFunc(view, func(d gpu.DeviceFree) bool { return d.Device.Index == sh.Device })
			if k < 0 || sh.Amount > view[k].Free || view[k].Device.MIGEnabled != (sh.MIG != nil) {
				return nil, false
			}
			d := view[k]
			if !d.Device.MIGEnabled && sh.Amount < per && d.MPSShared && d.MPSUser != job.UID {
				return nil, false
			}
			view[k].Free -= sh.Amount
		}
		alloc = append(alloc, api.NodeGPUs{Node: name, Shares: gpu.SharesAPI(st.GPUs[i]), FGPUPerGPUHundredths: int(per)})
	}
	for i, name := range st.Nodes {
		for _, sh := range st.GPUs[i] {
			held[name] = append(held[name], gpu.Holding{UID: job.UID, Share: sh})
		}
	}
	return alloc, true
}

// gpuRequest is a job's GPUs per node, as the controller resolves them.
type gpuRequest struct {
	fgpu, gpus int
	typ        string
}

func (r gpuRequest) none() bool { return r.fgpu == 0 && r.gpus == 0 }

func (r gpuRequest) apply(job *api.Job) {
	job.FGPUHundredths, job.GPUs, job.GPUType = r.fgpu, r.gpus, r.typ
}

func (r gpuRequest) String() string {
	switch {
	case r.fgpu > 0:
		return gpu.Hundredths(r.fgpu).String() + " fGPU"
	case r.typ != "":
		return fmt.Sprintf("%d GPU(s) of type %s", r.gpus, r.typ)
	}
	return fmt.Sprintf("%d GPU(s)", r.gpus)
}

// fitsIdle says whether the request fits on the node's idle devices.
func (r gpuRequest) fitsIdle(devs []gpu.Device, per gpu.Hundredths, uid uint32) bool {
	amount := gpu.Hundredths(r.fgpu) + gpu.GPUs(r.gpus, per)
	return gpu.Fits(gpu.FreeOf(gpu.FilterType(devs, r.typ), nil, per), gpu.Request{Amount: amount, UID: uid}, per)
}

// checkGresNames refuses generic resources this cluster does not have:
// it has GPUs only.
func checkGresNames(_ *admission, spec *api.JobSpec) error {
	for _, list := range [][]api.GresRequest{spec.Gres, spec.GPUs, spec.GPUsPerNode, spec.GPUsPerTask} {
		for _, g := range list {
			if g.Name != "gpu" {
				return invalid("generic resource %q does not exist on this cluster (it has gpu); nothing was submitted", g.Name)
			}
		}
	}
	return nil
}

// gpuRequestOf is a valid spec's GPUs per node (whole GPUs by jobspec's
// rule).
func gpuRequestOf(spec *api.JobSpec) gpuRequest {
	n, typ, _ := jobspec.PerNodeGPUs(spec) // jobspec.Validate refused its errors
	return gpuRequest{fgpu: spec.FGPUHundredths, gpus: int(n), typ: typ}
}

// gpusFit refuses a GPU request that no known node of the job's
// partition could ever hold. The caller holds Server.mu (read).
func gpusFit(spec *api.JobSpec, req gpuRequest, uid uint32, known []*node, parts partitions) error {
	if req.none() || len(known) == 0 {
		return nil // nodes may register later
	}
	fit, withGPUs, most := 0, 0, ""
	largest := 0
	var models []string
	for _, nd := range sortNodes(known) {
		if len(nd.gpus) == 0 {
			continue
		}
		withGPUs++
		per := nd.perGPU(parts)
		if m := nd.gpus[0].Name; !slices.Contains(models, m) {
			models = append(models, m)
		}
		if len(nd.gpus) > largest {
			largest, most = len(nd.gpus), fmt.Sprintf("%d GPUs worth %s fGPU each", len(nd.gpus), per)
		}
		if nd.rec.CPUs >= spec.CPUs && nd.rec.MemBytes >= spec.MemBytes && req.fitsIdle(nd.gpus, per, uid) {
			fit++
		}
	}
	never := func(format string, args ...any) error {
		return invalid("%s: it could never run", fmt.Sprintf(format, args...))
	}
	switch {
	case withGPUs == 0:
		return never("job asks for %s per node but no node in partition %s has GPUs", req, spec.Partition)
	case fit == 0 && req.typ != "" && !anyModel(models, req.typ):
		return never("job asks for GPUs of type %s but partition %s has none (models: %s)", req.typ, spec.Partition, strings.Join(models, ", "))
	case fit == 0:
		return never("job asks for %s per node (and %d CPUs) but no node in partition %s can hold it (largest: %s)",
			req, spec.CPUs, spec.Partition, most)
	case fit < max(spec.Nodes, 1):
		return never("job asks for %d nodes with %s each but partition %s has %d that can hold it", spec.Nodes, req, spec.Partition, fit)
	}
	return nil
}

func anyModel(models []string, typ string) bool {
	for _, m := range models {
		if gpu.MatchesType(m, typ) {
			return true
		}
	}
	return false
}

// gpuView is a node's fGPU for listings: total, allocated, the worth of
// one GPU and each device with what is allocated on it.
func (n *node) gpuView(name string, parts partitions, held map[string][]gpu.Holding, jobsOf map[string]map[int][]uint64) (total, alloc, per int, devs []api.NodeGPU) {
	if len(n.gpus) == 0 {
		return 0, 0, 0, nil
	}
	p := n.perGPU(parts)
	for _, f := range gpu.FreeOf(n.gpus, held[name], p) {
		used := int(p - f.Free)
		alloc += used
		devs = append(devs, api.NodeGPU{GPU: f.Device.API(), AllocHundredths: used, Jobs: jobsOf[name][f.Device.Index]})
	}
	return int(gpu.NodeCapacity(n.gpus, p)), alloc, int(p), devs
}

// checkRegisterGPUs refuses device lists that would confuse placement.
func checkRegisterGPUs(req *api.RegisterRequest) error {
	if h := gpu.Hundredths(req.FGPUPerGPUHundredths); h != 0 {
		if err := gpu.CheckPerGPU(h); err != nil {
			return fmt.Errorf("node %s: fgpu_per_gpu: %v", req.Name, err)
		}
	}
	seen := map[int]bool{}
	for _, g := range req.GPUs {
		if seen[g.Index] || g.Index < 0 || g.MemoryBytes < 0 {
			return fmt.Errorf("node %s reports GPU %d twice or with a negative index or memory", req.Name, g.Index)
		}
		seen[g.Index] = true
	}
	return nil
}

// gpusChanged says whether a registration changes the node's GPUs.
func gpusChanged(old, rec *store.NodeRecord) bool {
	return old.FGPUPerGPUHundredths != rec.FGPUPerGPUHundredths || !reflect.DeepEqual(old.GPUs, rec.GPUs)
}

// withoutFGPU leaves fGPU out of a resource check: the controller checks
// GPUs per device (nodeRegistry.startGPUs), not as one number per node.
func withoutFGPU(r sched.Resources) sched.Resources {
	r.FGPU = 0
	return r
}

// withGPUTime sets an accounting record's GPU time: elapsed time x the
// physical GPUs the run held, rounded to whole seconds.
func withGPUTime(r api.AcctRecord, gpus float64) api.AcctRecord {
	r.GPUTimeS = int64(float64(r.ElapsedS)*gpus + 0.5)
	return r
}

// free is what each node that is up has free, given alloc, what is
// allocated on each; fGPU aside, as devices are checked per share.
func (r *nodeRegistry) free(alloc map[string]sched.Resources) map[string]sched.Resources {
	free := make(map[string]sched.Resources, len(r.byName))
	for name, n := range r.byName {
		if n.up {
			free[name] = withoutFGPU(sched.Resources{CPUs: n.rec.CPUs, MemBytes: n.rec.MemBytes}.Sub(alloc[name]))
		}
	}
	return free
}
