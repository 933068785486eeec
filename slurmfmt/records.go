package slurmfmt

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
)

// Record ends: Slurm ends a job record with one more (empty) indented
// line, then a blank line, and nodes' and partitions' with the blank
// line alone; on one line (scontrol -o), with a space and a newline for
// a job, a newline for the others.
const (
	endJob   = true
	endOther = false
)

// writeRecord prints scontrol's key=value layout: the pairs of a line
// joined by a space, the lines by a newline and three spaces (by a space
// in e.OneLiner's form), then the record's end. An empty pair leaves the
// trailing space some of Slurm's lines have.
func writeRecord(w io.Writer, lines [][]string, job bool, e *Env) error {
	sep := "\n   "
	if e != nil && e.OneLiner {
		sep = " "
	}
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteString(sep)
		}
		for k, kv := range l {
			if k > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(printable(kv))
		}
	}
	if job {
		b.WriteString(sep)
	}
	b.WriteByte('\n')
	if e == nil || !e.OneLiner {
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func kv(key string, value any) string { return fmt.Sprintf("%s=%v", key, value) }

// JobRecord prints j as `scontrol show job` does. Fields corral does not
// keep print as Slurm prints an unset value.
func JobRecord(w io.Writer, j *api.Job, e *Env) error {
	exit := "0:0"
	if j.ExitCode != nil {
		exit = fmt.Sprintf("%d:%d", *j.ExitCode, j.Signal)
	}
	limitText := "UNLIMITED"
	if j.TimeLimit > 0 {
		limitText = Clock(j.TimeLimit)
	}
	requeue := 1
	if j.Spec.Requeue != nil && !*j.Spec.Requeue {
		requeue = 0
	}
	nodes := jobNodes(j)
	numNodes := strconv.Itoa(nodes)
	if j.State == api.StatePending && nodes > 1 {
		numNodes += "-" + numNodes // a pending job's range, min-max
	}
	tasks := j.Spec.Ntasks
	if tasks < 1 {
		tasks = nodes // sbatch -N without -n: a task per node
	}
	cpt := max(j.Spec.CPUsPerTask, 1)
	stdout := jobspec.JobOutputPath(j, j.Spec.Output)
	stderr := stdout
	if j.Spec.Error != "" {
		stderr = jobspec.JobOutputPath(j, j.Spec.Error)
	}
	stdin := "/dev/null"
	if j.Spec.Input != "" {
		stdin = jobspec.JobOutputPath(j, j.Spec.Input)
	}
	start := j.StartTime
	if start == nil {
		start = j.PlannedStart
	}
	user := fmt.Sprintf("%s(%d)", j.User, j.UID)
	group := fmt.Sprintf("%s(%d)", e.groupName(j.GID), j.GID)
	lines := [][]string{
		{kv("JobId", j.ID), kv("JobName", j.Name)},
	}
	if j.ArrayJobID != 0 {
		lines[0] = []string{kv("JobId", j.ID), kv("ArrayJobId", j.ArrayJobID), kv("ArrayTaskId", ArrayTask(j, "(null)")), kv("JobName", j.Name)}
	}
	lines = append(lines,
		[]string{kv("UserId", user), kv("GroupId", group), kv("MCS_label", "N/A")},
		[]string{kv("Priority", priority(j)), kv("Nice", j.Spec.Nice), kv("Account", orNull(j.Spec.Account)), kv("QOS", orNull(j.Spec.QOS))},
		[]string{kv("JobState", StateLong(j)), kv("Reason", reason(j)), kv("Dependency", dependency(j))},
		[]string{kv("Requeue", requeue), kv("Restarts", j.Restarts), kv("BatchFlag", 1), kv("Reboot", 0), kv("ExitCode", exit)},
		[]string{kv("RunTime", Clock(int64(j.Elapsed(e.Now)/time.Second))), kv("TimeLimit", limitText), kv("TimeMin", "N/A")},
		[]string{kv("SubmitTime", e.stamp(&j.SubmitTime, "Unknown")), kv("EligibleTime", e.stamp(eligible(j), "Unknown"))},
		[]string{kv("AccrueTime", e.stamp(eligible(j), "Unknown"))},
		[]string{kv("StartTime", e.stamp(start, "Unknown")), kv("EndTime", e.stamp(jobEnd(j), "Unknown")), kv("Deadline", "N/A")},
		[]string{kv("SuspendTime", e.stamp(j.SuspendTime, "None")), kv("SecsPreSuspend", secsPreSuspend(j)), kv("LastSchedEval", e.stamp(j.StartTime, "Unknown")), kv("Scheduler", "Main")},
		[]string{kv("Partition", j.Partition), kv("AllocNode:Sid", "(null)")},
		[]string{kv("ReqNodeList", orNull(nodeList(j.Spec.NodeList))), kv("ExcNodeList", orNull(nodeList(j.Spec.Exclude)))},
		nodeListLine(j),
	)
	if len(j.Nodes) > 0 {
		lines = append(lines, []string{kv("BatchHost", firstNode(j))})
	}
	lines = append(lines,
		[]string{kv("NumNodes", numNodes), kv("NumCPUs", j.CPUs*nodes), kv("NumTasks", tasks), kv("CPUs/Task", cpt), kv("ReqB:S:C:T", "0:0:*:*")},
		[]string{kv("TRES", tres(j, nodes))},
		[]string{kv("Socks/Node", "*"), kv("NtasksPerN:B:S:C", "0:0:*:*"), kv("CoreSpec", "*")},
		[]string{kv("MinCPUsNode", j.CPUs), minMemory(j), kv("MinTmpDiskNode", 0)},
		[]string{kv("Features", orNull(j.Spec.Constraint)), kv("DelayBoot", "00:00:00")},
		[]string{kv("OverSubscribe", overSubscribe(j)), kv("Contiguous", 0), kv("Licenses", "(null)"), kv("Network", "(null)")},
		[]string{kv("Command", "(null)")},
		[]string{kv("WorkDir", orNull(j.Spec.WorkDir))},
	)
	if j.Spec.Comment != "" {
		lines = append(lines, []string{kv("Comment", j.Spec.Comment), ""})
	}
	lines = append(lines,
		[]string{kv("StdErr", stderr)},
		[]string{kv("StdIn", stdin)},
		[]string{kv("StdOut", stdout)},
		[]string{kv("Power", "")},
	)
	if g := gresPerNode(j); g != "N/A" {
		lines = append(lines, []string{kv("TresPerNode", g)})
	}
	return writeRecord(w, lines, endJob, e)
}

// minMemory is MinMemoryCPU when the job's memory is per CPU (asked
// with --mem-per-cpu, or the partition's default), else MinMemoryNode;
// 0 for all of each node's memory.
func minMemory(j *api.Job) string {
	switch {
	case j.Spec.MemWholeNode: // --mem=0 or --mem-per-cpu=0, as Slurm shows them
		return kv("MinMemoryNode", "0")
	case j.Spec.MemPerCPU > 0:
		return kv("MinMemoryCPU", MemMB(j.Spec.MemPerCPU))
	case j.Spec.MemBytes == 0 && j.Spec.MemPerGPU == 0 && j.CPUs > 0:
		return kv("MinMemoryCPU", MemMB(j.MemBytes/int64(j.CPUs)))
	}
	return kv("MinMemoryNode", MemMB(j.MemBytes))
}

// eligible is when the job became (or becomes) eligible to start:
// unknown while held or waiting on a dependency, as Slurm shows it.
func eligible(j *api.Job) *time.Time {
	if j.State == api.StatePending {
		switch j.Reason {
		case api.ReasonJobHeld, api.ReasonJobHeldAdmin, api.ReasonDependency, api.ReasonDependencyNeverSatisfied:
			return nil
		}
	}
	if j.Spec.Begin != nil && j.Spec.Begin.After(j.SubmitTime) {
		return j.Spec.Begin
	}
	return &j.SubmitTime
}

// nodeListLine is the job's nodes, and for a pending job the nodes it
// is planned on (SchedNodeList, as Slurm's backfill sets it).
func nodeListLine(j *api.Job) []string {
	line := []string{kv("NodeList", nodeList(j.Nodes))}
	if j.State == api.StatePending && len(j.PlannedNodes) > 0 {
		line = append(line, kv("SchedNodeList", nodeList(j.PlannedNodes)))
	}
	return line
}

// jobEnd is when the job ended or, with a limit, will end: running, or
// pending with a planned start.
func jobEnd(j *api.Job) *time.Time {
	start := j.StartTime
	if start == nil && j.State == api.StatePending {
		start = j.PlannedStart
	}
	if j.EndTime != nil || start == nil || j.TimeLimit <= 0 {
		return j.EndTime
	}
	end := start.Add(time.Duration(j.TimeLimit) * time.Second)
	return &end
}

func firstNode(j *api.Job) string {
	if len(j.Nodes) > 0 {
		return j.Nodes[0]
	}
	return ""
}

// overSubscribe is Slurm's word for how the job shares its nodes: NO
// (--exclusive), USER (--exclusive=user), YES (-s, where the partition
// allows it), else OK.
func overSubscribe(j *api.Job) string {
	switch {
	case j.Spec.Exclusive == "node":
		return "NO"
	case j.Spec.Exclusive == "user":
		return "USER"
	case j.Spec.OverSubscribe:
		return "YES"
	}
	return "OK"
}

// PartitionOverSubscribe is the partition's OverSubscribe= as sinfo and
// scontrol print it; unset is NO.
func PartitionOverSubscribe(p *api.Partition) string {
	if p.OverSubscribe == "" {
		return "NO"
	}
	return p.OverSubscribe
}

// tres is the job's trackable resources in Slurm's cpu=,mem=,node=
// form (memory for all its nodes).
func tres(j *api.Job, nodes int) string {
	parts := []string{"cpu=" + strconv.Itoa(j.CPUs*nodes)}
	if j.MemBytes > 0 {
		parts = append(parts, "mem="+MemMB(j.MemBytes*int64(nodes)))
	}
	parts = append(parts, "node="+strconv.Itoa(nodes), "billing="+strconv.Itoa(j.CPUs*nodes))
	if j.GPUs > 0 {
		parts = append(parts, "gres/gpu="+strconv.Itoa(j.GPUs*nodes))
	}
	return strings.Join(parts, ",")
}

// NodeRecord prints n as `scontrol show node` does.
func NodeRecord(w io.Writer, n *api.Node, e *Env) error {
	state := nodeStateComplete(n)
	lines := [][]string{
		{kv("NodeName", n.Name), kv("Arch", "(null)"), kv("CoresPerSocket", 1), ""},
		{kv("CPUAlloc", n.AllocCPUs), kv("CPUEfctv", n.CPUs), kv("CPUTot", n.CPUs), kv("CPULoad", "N/A")},
		{kv("AvailableFeatures", features(n))},
		{kv("ActiveFeatures", features(n))},
		{kv("Gres", nodeGres(n))},
		{kv("NodeAddr", orNull(n.Addr)), kv("NodeHostName", n.Name)},
		{kv("RealMemory", n.MemBytes>>20), kv("AllocMem", n.AllocMemBytes>>20), kv("FreeMem", "N/A"), kv("Sockets", n.CPUs), kv("Boards", 1)},
		{kv("State", state), kv("ThreadsPerCore", 1), kv("TmpDisk", 0), kv("Weight", 1), kv("Owner", "N/A"), kv("MCS_label", "N/A")},
		{kv("Partitions", orNull(strings.Join(n.Partitions, ","))), ""},
		{kv("LastBusyTime", e.stamp(&n.LastHeartbeat, "None"))},
		{kv("CfgTRES", fmt.Sprintf("cpu=%d,mem=%s,billing=%d", n.CPUs, MemMB(n.MemBytes), n.CPUs))},
		{kv("AllocTRES", allocTRES(n))},
	}
	if n.Reason != "" {
		reason := n.Reason
		if n.DrainedSince != nil {
			reason += " [" + e.stamp(n.DrainedSince, "") + "]"
		}
		lines = append(lines, []string{kv("Reason", reason)})
	}
	return writeRecord(w, lines, endOther, e)
}

func nodeGres(n *api.Node) string {
	if len(n.GPUs) == 0 {
		return "(null)"
	}
	return "gpu:" + strconv.Itoa(len(n.GPUs))
}

func allocTRES(n *api.Node) string {
	if n.AllocCPUs == 0 && n.AllocMemBytes == 0 {
		return ""
	}
	return fmt.Sprintf("cpu=%d,mem=%s", n.AllocCPUs, MemMB(n.AllocMemBytes))
}

// PartitionRecord prints p as `scontrol show partition` does; nodes are
// the cluster's nodes, for its totals.
func PartitionRecord(w io.Writer, p *api.Partition, nodes []api.Node, e *Env) error {
	members := PartitionNodes(p, nodes)
	names := make([]string, len(members))
	cpus := 0
	var mem int64
	for i, n := range members {
		names[i] = n.Name
		cpus += n.CPUs
		mem += n.MemBytes
	}
	yesNo := map[bool]string{true: "YES", false: "NO"}
	defTime := "NONE"
	if p.DefaultTime > 0 {
		defTime = Clock(p.DefaultTime)
	}
	defMem := "UNLIMITED"
	if p.DefaultMemPerCPU > 0 {
		defMem = strconv.FormatInt(p.DefaultMemPerCPU>>20, 10)
	}
	lines := [][]string{
		{kv("PartitionName", p.Name)},
		{kv("AllowGroups", "ALL"), kv("AllowAccounts", "ALL"), kv("AllowQos", "ALL")},
		{kv("AllocNodes", "ALL"), kv("Default", yesNo[p.Default]), kv("QoS", "N/A")},
		{kv("DefaultTime", defTime), kv("DisableRootJobs", "NO"), kv("ExclusiveUser", "NO"), kv("GraceTime", 0), kv("Hidden", "NO")},
		{kv("MaxNodes", "UNLIMITED"), kv("MaxTime", limit(p.MaxTime, Clock)), kv("MinNodes", 0), kv("LLN", "NO"), kv("MaxCPUsPerNode", "UNLIMITED")},
		{kv("Nodes", orNull(nodeList(names)))},
		{kv("PriorityJobFactor", 1), kv("PriorityTier", 1), kv("RootOnly", "NO"), kv("ReqResv", "NO"), kv("OverSubscribe", PartitionOverSubscribe(p))},
		{kv("OverTimeLimit", "NONE"), kv("PreemptMode", "OFF")},
		{kv("State", "UP"), kv("TotalCPUs", cpus), kv("TotalNodes", len(members)), kv("SelectTypeParameters", "NONE")},
		{kv("JobDefaults", "(null)")},
		{kv("DefMemPerCPU", defMem), kv("MaxMemPerNode", "UNLIMITED")},
		{kv("TRES", fmt.Sprintf("cpu=%d,mem=%s,node=%d,billing=%d", cpus, MemMB(mem), len(members), cpus))},
	}
	return writeRecord(w, lines, endOther, e)
}

// PartitionNodes are the nodes of p among nodes, in their order.
func PartitionNodes(p *api.Partition, nodes []api.Node) []api.Node {
	var out []api.Node
	for _, n := range nodes {
		if p.AllNodes || slices.Contains(p.Nodes, n.Name) || slices.Contains(n.Partitions, p.Name) {
			out = append(out, n)
		}
	}
	return out
}

// features is a node's features as Slurm lists them, "(null)" for none.
func features(n *api.Node) string { return orNull(strings.Join(n.Features, ",")) }

// secsPreSuspend is how long the job ran before its last suspend (its
// SuspendTime then, or before the suspend its last resume ended), as
// Slurm's SecsPreSuspend; 0 for a job never suspended.
func secsPreSuspend(j *api.Job) int64 {
	if j.SuspendTime == nil || j.StartTime == nil {
		return 0
	}
	return max(int64(j.SuspendTime.Sub(*j.StartTime)/time.Second)-j.SuspendedSecs, 0)
}
