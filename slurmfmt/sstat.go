package slurmfmt

import (
	"io"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// sstat's fields (sstat.c's table, with its widths). corral fills the
// memory, page-fault and CPU figures of a running step's tasks, which it
// reads from their processes; the others (disk, energy, CPU frequency,
// the TRESUsage* lists) are accepted and print empty, as sstat prints a
// figure it has no value for.

// sstatField is one sstat field: its name, width and value (nil: empty).
type sstatField struct {
	name  string
	width int
	value func(st *api.StepStats) string
}

var sstatFields = []sstatField{
	{"AveCPU", 10, func(st *api.StepStats) string {
		return cpuSecs(ave(st, func(t *api.TaskStats) int64 { return t.CPUUsec }))
	}},
	{"AveCPUFreq", 10, nil},
	{"AveDiskRead", 12, nil},
	{"AveDiskWrite", 12, nil},
	{"AvePages", 10, func(st *api.StepStats) string { return count(ave(st, func(t *api.TaskStats) int64 { return t.Pages })) }},
	{"AveRSS", 10, func(st *api.StepStats) string {
		return kilobytes(ave(st, func(t *api.TaskStats) int64 { return t.RSSBytes }))
	}},
	{"AveVMSize", 10, func(st *api.StepStats) string {
		return kilobytes(ave(st, func(t *api.TaskStats) int64 { return t.VMSizeBytes }))
	}},
	{"ConsumedEnergy", 14, nil},
	{"ConsumedEnergyRaw", 17, nil},
	{"JobID", -12, func(st *api.StepStats) string {
		return strconv.FormatUint(st.JobID, 10) + "." + api.StepName(st.StepID)
	}},
	{"MaxDiskRead", 12, nil},
	{"MaxDiskReadNode", 15, nil},
	{"MaxDiskReadTask", 15, nil},
	{"MaxDiskWrite", 12, nil},
	{"MaxDiskWriteNode", 16, nil},
	{"MaxDiskWriteTask", 16, nil},
	{"MaxPages", 8, extreme(maxPages, func(t *api.TaskStats) string { return count(t.Pages) })},
	{"MaxPagesNode", 12, extreme(maxPages, func(t *api.TaskStats) string { return t.Node })},
	{"MaxPagesTask", 14, extreme(maxPages, taskRank)},
	{"MaxRSS", 10, extreme(maxRSS, func(t *api.TaskStats) string { return kilobytes(t.MaxRSSBytes) })},
	{"MaxRSSNode", 10, extreme(maxRSS, func(t *api.TaskStats) string { return t.Node })},
	{"MaxRSSTask", 10, extreme(maxRSS, taskRank)},
	{"MaxVMSize", 10, extreme(maxVM, func(t *api.TaskStats) string { return kilobytes(t.MaxVMSizeBytes) })},
	{"MaxVMSizeNode", 14, extreme(maxVM, func(t *api.TaskStats) string { return t.Node })},
	{"MaxVMSizeTask", 14, extreme(maxVM, taskRank)},
	{"MinCPU", 10, extreme(minCPU, func(t *api.TaskStats) string { return cpuSecs(t.CPUUsec) })},
	{"MinCPUNode", 10, extreme(minCPU, func(t *api.TaskStats) string { return t.Node })},
	{"MinCPUTask", 10, extreme(minCPU, taskRank)},
	{"Nodelist", 20, func(st *api.StepStats) string { return nodeList(st.Nodes) }},
	{"NTasks", 8, func(st *api.StepStats) string { return strconv.Itoa(len(st.Tasks)) }},
	{"Pids", 20, func(st *api.StepStats) string {
		var pids []string
		for _, t := range st.Tasks {
			for _, p := range t.PIDs {
				pids = append(pids, strconv.Itoa(p))
			}
		}
		return strings.Join(pids, ",")
	}},
	{"ReqCPUFreq", 10, nil},
	{"ReqCPUFreqMin", 13, nil},
	{"ReqCPUFreqMax", 13, nil},
	{"ReqCPUFreqGov", 13, nil},
	{"TRESUsageInAve", 14, nil},
	{"TRESUsageInMax", 14, nil},
	{"TRESUsageInMaxNode", 18, nil},
	{"TRESUsageInMaxTask", 18, nil},
	{"TRESUsageInMin", 14, nil},
	{"TRESUsageInMinNode", 18, nil},
	{"TRESUsageInMinTask", 18, nil},
	{"TRESUsageInTot", 14, nil},
	{"TRESUsageOutAve", 15, nil},
	{"TRESUsageOutMax", 15, nil},
	{"TRESUsageOutMaxNode", 19, nil},
	{"TRESUsageOutMaxTask", 19, nil},
	{"TRESUsageOutMin", 15, nil},
	{"TRESUsageOutMinNode", 19, nil},
	{"TRESUsageOutMinTask", 19, nil},
	{"TRESUsageOutTot", 15, nil},
}

// SstatDefault is sstat's default field list (sstat.h's STAT_FIELDS).
const SstatDefault = "JobID,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,MaxRSS,MaxRSSNode,MaxRSSTask,AveRSS," +
	"MaxPages,MaxPagesNode,MaxPagesTask,AvePages,MinCPU,MinCPUNode,MinCPUTask,AveCPU,NTasks,AveCPUFreq," +
	"ReqCPUFreqMin,ReqCPUFreqMax,ReqCPUFreqGov,ConsumedEnergy,MaxDiskRead,MaxDiskReadNode,MaxDiskReadTask," +
	"AveDiskRead,MaxDiskWrite,MaxDiskWriteNode,MaxDiskWriteTask,AveDiskWrite,TRESUsageInAve,TRESUsageInMax," +
	"TRESUsageInMaxNode,TRESUsageInMaxTask,TRESUsageInMin,TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInTot," +
	"TRESUsageOutAve,TRESUsageOutMax,TRESUsageOutMaxNode,TRESUsageOutMaxTask,TRESUsageOutMin,TRESUsageOutMinNode," +
	"TRESUsageOutMinTask,TRESUsageOutTot"

// SstatLayout is a parsed sstat -o list.
type SstatLayout struct {
	fields []sstatField
	widths []int
}

// ParseSstatFormat reads an sstat -o list: names in any case, each with
// an optional %WIDTH, as sacct's.
func ParseSstatFormat(list string) (*SstatLayout, error) {
	items, err := parseFieldList(list, len(sstatFields), func(i int) (string, int) { return sstatFields[i].name, sstatFields[i].width })
	if err != nil {
		return nil, err
	}
	l := &SstatLayout{}
	for _, it := range items {
		l.fields, l.widths = append(l.fields, sstatFields[it.field]), append(l.widths, it.width)
	}
	return l, nil
}

// SstatFieldNames lists the fields sstat -o takes (sstat -e).
func SstatFieldNames() []string {
	out := make([]string, len(sstatFields))
	for i, f := range sstatFields {
		out[i] = f.name
	}
	return out
}

// WriteSstat prints one line per step, as sstat does.
func WriteSstat(w io.Writer, l *SstatLayout, steps []*api.StepStats, st AcctStyle) error {
	cols := make([]Column, len(l.fields))
	for i, f := range l.fields {
		cols[i] = Column{Name: f.name, Width: l.widths[i]}
	}
	values := make([][]string, len(steps))
	for i, s := range steps {
		values[i] = make([]string, len(l.fields))
		for k, f := range l.fields {
			if f.value != nil {
				values[i][k] = f.value(s)
			}
		}
	}
	return WriteColumns(w, cols, values, st)
}

// ave is the tasks' mean of f; 0 without tasks.
func ave(st *api.StepStats, f func(*api.TaskStats) int64) int64 {
	if len(st.Tasks) == 0 {
		return 0
	}
	var sum int64
	for i := range st.Tasks {
		sum += f(&st.Tasks[i])
	}
	return sum / int64(len(st.Tasks))
}

// extreme prints show of the task better picks (the first on ties, as
// the lowest rank); empty without tasks.
func extreme(better func(a, b *api.TaskStats) bool, show func(*api.TaskStats) string) func(*api.StepStats) string {
	return func(st *api.StepStats) string {
		var best *api.TaskStats
		for i := range st.Tasks {
			if t := &st.Tasks[i]; best == nil || better(t, best) {
				best = t
			}
		}
		if best == nil {
			return ""
		}
		return show(best)
	}
}

func maxRSS(a, b *api.TaskStats) bool   { return a.MaxRSSBytes > b.MaxRSSBytes }
func maxVM(a, b *api.TaskStats) bool    { return a.MaxVMSizeBytes > b.MaxVMSizeBytes }
func maxPages(a, b *api.TaskStats) bool { return a.Pages > b.Pages }
func minCPU(a, b *api.TaskStats) bool   { return a.CPUUsec < b.CPUUsec }
func taskRank(t *api.TaskStats) string  { return strconv.Itoa(t.Rank) }

// cpuSecs is a CPU time as sstat prints it: whole seconds in sacct's
// TotalCPU layout.
func cpuSecs(usec int64) string { return CPUTime(usec / 1e6 * 1e6) }

// count is a number as Slurm's convert_num_unit prints one without a
// unit: plain up to 1024, then scaled to K, M, ...
func count(n int64) string {
	if n <= 1024 {
		return strconv.FormatInt(n, 10)
	}
	return scaled(float64(n)/1024, "KMGTP")
}
