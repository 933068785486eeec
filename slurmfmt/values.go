package slurmfmt

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/hostlist"
)

// TimeLayout is how Slurm's commands print a point in time: local, no
// zone.
const TimeLayout = "2006-01-02T15:04:05"

// Env is what formatting needs besides the records: the time "now" (for
// run times and time left, in the location times print in) and how to
// name a group.
type Env struct {
	Now time.Time
	// Group names a group ID; nil, or "" from it, prints the number.
	Group func(gid uint32) string
	// OneLiner prints scontrol's records one a line (scontrol -o).
	OneLiner bool
	// MemUnit is sacct's --units: memory sizes in K, M, G, T or P; 0
	// scales each to the largest unit it fills.
	MemUnit byte
}

// memSize is a size in bytes as sacct prints memory: kilobytes scaled
// (kilobytes), or in e's MemUnit, two decimals when not whole.
func (e *Env) memSize(bytes int64) string {
	if e == nil || e.MemUnit == 0 || bytes <= 0 {
		return kilobytes(bytes)
	}
	n := float64(bytes) / 1024
	for u := "KMGTP"; u[0] != e.MemUnit && len(u) > 1; u = u[1:] {
		n /= 1024
	}
	if n == float64(int64(n)) {
		return fmt.Sprintf("%.0f%c", n, e.MemUnit)
	}
	return fmt.Sprintf("%.2f%c", n, e.MemUnit)
}

func (e *Env) groupName(gid uint32) string {
	if e.Group != nil {
		if name := e.Group(gid); name != "" {
			return name
		}
	}
	return strconv.FormatUint(uint64(gid), 10)
}

// stamp prints t as Slurm prints times; unknown when t is unset.
func (e *Env) stamp(t *time.Time, unknown string) string {
	if t == nil || t.IsZero() {
		return unknown
	}
	loc := e.Now.Location()
	if loc == nil {
		loc = time.Local
	}
	return t.In(loc).Format(TimeLayout)
}

// Ctime is the line squeue -l and sinfo -l start with: the time as C's
// ctime(3) prints it ("Wed Nov 25 21:11:05 2026"), with its newline.
func Ctime(t time.Time) string { return t.Format("Mon Jan _2 15:04:05 2006") + "\n" }

// orNull is s, or "(null)" for an empty string as Slurm's C prints one.
func orNull(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}

// nodeList is names in hostlist form ("" for none).
func nodeList(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return hostlist.Compress(names)
}

// MemMB prints a size as squeue and sinfo do: in megabytes, moved to a
// larger unit only while it divides exactly (1024M is 1G, 1536M stays).
func MemMB(bytes int64) string {
	if bytes <= 0 {
		return "0"
	}
	n := bytes >> 20
	if n == 0 {
		n = 1 // under a megabyte still asks for memory
	}
	units := []string{"M", "G", "T", "P"}
	u := 0
	for n >= 1024 && n%1024 == 0 && u < len(units)-1 {
		n /= 1024
		u++
	}
	return strconv.FormatInt(n, 10) + units[u]
}

// StateLong is a job's state as squeue's %T and sacct print it, with
// CONFIGURING for a job whose node is still preparing it and COMPLETING
// for an ended job whose parts are still stopping.
func StateLong(j *api.Job) string {
	if j.State == api.StateRunning && j.Reason == api.ReasonImagePull {
		return "CONFIGURING"
	}
	if j.Completing {
		return "COMPLETING"
	}
	return string(j.State)
}

// jobNodes is the node count squeue shows: the allocation's, else what
// the job asks for, at least 1.
func jobNodes(j *api.Job) int {
	if len(j.Nodes) > 0 {
		return len(j.Nodes)
	}
	return max(j.NodeCount, 1)
}

// gresPerNode is squeue's TRES_PER_NODE: the job's GPUs per node in
// Slurm's gres:NAME[:TYPE]:COUNT form, "N/A" when it has none.
func gresPerNode(j *api.Job) string {
	var parts []string
	for _, g := range j.Spec.Gres {
		parts = append(parts, gresText(g))
	}
	for _, g := range j.Spec.GPUsPerNode {
		g.Name = "gpu"
		parts = append(parts, gresText(g))
	}
	if len(parts) == 0 && j.GPUs > 0 {
		parts = append(parts, gresText(api.GresRequest{Name: "gpu", Type: j.GPUType, Count: int64(j.GPUs)}))
	}
	if len(parts) == 0 {
		return "N/A"
	}
	return strings.Join(parts, ",")
}

func gresText(g api.GresRequest) string {
	if g.Type != "" {
		return fmt.Sprintf("gres:%s:%s:%d", g.Name, g.Type, g.Count)
	}
	return fmt.Sprintf("gres:%s:%d", g.Name, g.Count)
}

// ArrayTask is a job's array index as Slurm prints it: the pending tasks
// an entry folds (4-15%2), one task's index, or none outside arrays.
func ArrayTask(j *api.Job, none string) string {
	switch {
	case j.ArrayTasks != "":
		return j.ArrayTasks
	case j.ArrayTaskID != nil:
		return strconv.Itoa(*j.ArrayTaskID)
	}
	return none
}
