//go:build !slurmonly

package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/gpu"
)

// fgpuDecimal formats hundredths of an fGPU as decimal fGPU ("0.5").
func fgpuDecimal(h int) string { return gpu.Hundredths(h).String() }

// nodeHasGPUs says whether any node has fGPU to show.
func anyNodeGPUs(nodes []api.Node) bool {
	for _, n := range nodes {
		if n.FGPUHundredths > 0 || len(n.GPUs) > 0 {
			return true
		}
	}
	return false
}

// nodeFGPUText is a node's fGPU allocated/total ("1.5/4").
func nodeFGPUText(n *api.Node) string {
	if n.FGPUHundredths == 0 && len(n.GPUs) == 0 {
		return "-"
	}
	return fgpuDecimal(n.AllocFGPUHundredths) + "/" + fgpuDecimal(n.FGPUHundredths)
}

// gpuRows are `corral nodes --gpus`: one line per device of each node.
func gpuRows(nodes []api.Node) ([]string, [][]string) {
	header := []string{"NODE", "GPU", "MODEL", "MEMORY", "MIG", "FGPU(A/T)", "JOBS"}
	var rows [][]string
	for _, n := range nodes {
		for _, d := range n.GPUs {
			mig := "-"
			switch {
			case d.MIGEnabled:
				mig = "on"
			case d.MIGCapable:
				mig = "off"
			}
			jobs := make([]string, len(d.Jobs))
			for i, id := range d.Jobs {
				jobs[i] = strconv.FormatUint(id, 10)
			}
			rows = append(rows, []string{
				n.Name, strconv.Itoa(d.Index), d.Name, formatSize(d.MemoryBytes), mig,
				fgpuDecimal(d.AllocHundredths) + "/" + fgpuDecimal(n.FGPUPerGPUHundredths), dash(strings.Join(jobs, ",")),
			})
		}
	}
	return header, rows
}

// jobHasGPUs says whether a job asked for or holds any GPU.
func jobHasGPUs(j *api.Job) bool { return j.FGPUHundredths > 0 || j.GPUs > 0 || len(j.GPUAlloc) > 0 }

// jobFGPUText is what a listing shows of a job's GPUs: the fGPU it holds
// per node once it runs ("0.5"), before that its request ("0.5", or
// "gpu:a100:2" for whole GPUs, whose fGPU depends on the node); "-" for
// none.
func jobFGPUText(j *api.Job) string {
	if len(j.GPUAlloc) > 0 {
		return fgpuDecimal(int(gpu.Total(gpu.SharesFromAPI(j.GPUAlloc[0].Shares))))
	}
	switch {
	case j.FGPUHundredths > 0:
		return fgpuDecimal(j.FGPUHundredths)
	case j.GPUs > 0 && j.GPUType != "":
		return fmt.Sprintf("gpu:%s:%d", j.GPUType, j.GPUs)
	case j.GPUs > 0:
		return fmt.Sprintf("gpu:%d", j.GPUs)
	}
	return "-"
}

// gpuAllocText lists a job's shares: "n1:0=0.5,1=1(MIG-…)".
func gpuAllocText(alloc []api.NodeGPUs) string {
	var parts []string
	for _, a := range alloc {
		var shares []string
		for _, s := range a.Shares {
			t := strconv.Itoa(s.Device) + "=" + fgpuDecimal(s.AmountHundredths)
			if s.MIG != nil {
				t += "(" + s.MIG.Name
				if s.MIGDevice != "" {
					t += " " + s.MIGDevice
				}
				t += ")"
			}
			shares = append(shares, t)
		}
		parts = append(parts, a.Node+":"+strings.Join(shares, ","))
	}
	return strings.Join(parts, " ")
}

// gpuLines are the show lines of a job with GPUs; none without.
func gpuLines(j *api.Job) [][]string {
	if !jobHasGPUs(j) {
		return nil
	}
	req := "(null)"
	switch {
	case j.FGPUHundredths > 0:
		req = fgpuDecimal(j.FGPUHundredths) + " fGPU"
	case j.GPUs > 0:
		req = strconv.Itoa(j.GPUs) + " GPU"
		if j.GPUType != "" {
			req += " of type " + j.GPUType
		}
	}
	line := []string{kv("GPUsPerNode", req), kv("FGPU", jobFGPUText(j))}
	if len(j.GPUAlloc) > 0 {
		line = append(line, kv("GPUAlloc", gpuAllocText(j.GPUAlloc)))
	}
	return [][]string{line}
}

// withFGPUColumn adds an FGPU column before NODES when some job has GPUs,
// so listings of clusters without GPUs stay as squeue prints them.
func withFGPUColumn(jobs []api.Job, header []string, rows [][]string) ([]string, [][]string) {
	has := false
	for i := range jobs {
		has = has || jobHasGPUs(&jobs[i])
	}
	at := slices.Index(header, "NODES")
	if !has || at < 0 {
		return header, rows
	}
	header = slices.Insert(slices.Clone(header), at, "FGPU")
	for i := range rows {
		rows[i] = slices.Insert(rows[i], at, jobFGPUText(&jobs[i]))
	}
	return header, rows
}

// withGPULines puts a job's GPU lines after its NodeList line.
func withGPULines(j *api.Job, lines [][]string) [][]string {
	extra := gpuLines(j)
	for i, l := range lines {
		if len(extra) > 0 && len(l) > 0 && strings.HasPrefix(l[0], "NodeList=") {
			return slices.Insert(lines, i+1, extra...)
		}
	}
	return append(lines, extra...)
}
