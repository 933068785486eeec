package slurmfmt

import (
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// heldTwoNodes is the job Slurm 22.05 printed below (scripts/slurm-diff.sh):
// sbatch -H --comment 'hello world' -N 2 --mem-per-cpu 100 -c 1 --wrap true
func heldTwoNodes() *api.Job {
	return &api.Job{
		ID: 7, Name: "wrap", User: "root", Partition: "batch", State: api.StatePending,
		Reason: api.ReasonJobHeld, Hold: "user", Priority: 4000, CPUs: 1, MemBytes: 100 << 20, NodeCount: 2,
		SubmitTime: *at("2026-03-04T11:16:21"),
		Spec: api.JobSpec{WorkDir: "/tmp", Output: "/tmp/slurm-%j.out", Comment: "hello world",
			MemPerCPU: 100 << 20, MemBytes: 100 << 20, Nodes: 2},
	}
}

// slurmHeld is what Slurm printed for that job, but for the two fields
// corral does not keep (AllocNode:Sid, LastSchedEval; docs/slurm.md).
const slurmHeld = `JobId=7 JobName=wrap
   UserId=root(0) GroupId=root(0) MCS_label=N/A
   Priority=0 Nice=0 Account=(null) QOS=(null)
   JobState=PENDING Reason=JobHeldUser Dependency=(null)
   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0
   RunTime=00:00:00 TimeLimit=UNLIMITED TimeMin=N/A
   SubmitTime=2026-03-04T11:16:21 EligibleTime=Unknown
   AccrueTime=Unknown
   StartTime=Unknown EndTime=Unknown Deadline=N/A
   SuspendTime=None SecsPreSuspend=0 LastSchedEval=Unknown Scheduler=Main
   Partition=batch AllocNode:Sid=(null)
   ReqNodeList=(null) ExcNodeList=(null)
   NodeList=
   NumNodes=2-2 NumCPUs=2 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:*
   TRES=cpu=2,mem=200M,node=2,billing=2
   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*
   MinCPUsNode=1 MinMemoryCPU=100M MinTmpDiskNode=0
   Features=(null) DelayBoot=00:00:00
   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)
   Command=(null)
   WorkDir=/tmp
   Comment=hello world 
   StdErr=/tmp/slurm-7.out
   StdIn=/dev/null
   StdOut=/tmp/slurm-7.out
   Power=
   

`

func TestJobRecordAsSlurm(t *testing.T) {
	env := &Env{Now: testNow, Group: func(uint32) string { return "root" }}
	var b strings.Builder
	if err := JobRecord(&b, heldTwoNodes(), env); err != nil {
		t.Fatal(err)
	}
	if b.String() != slurmHeld {
		t.Errorf("scontrol show job:\n%q\nwant (Slurm's):\n%q", b.String(), slurmHeld)
	}
	// scontrol -o: the same pairs on one line, the job's ending a space.
	b.Reset()
	env.OneLiner = true
	if err := JobRecord(&b, heldTwoNodes(), env); err != nil {
		t.Fatal(err)
	}
	want := strings.ReplaceAll(strings.TrimSuffix(slurmHeld, "\n   \n\n"), "\n   ", " ") + " \n"
	if b.String() != want {
		t.Errorf("scontrol -o show job:\n%q\nwant:\n%q", b.String(), want)
	}
}

// TestJobRecordRunning: the lines that differ once a job runs: its
// nodes and batch host, times known, one node range, memory per node
// when --mem was given.
func TestJobRecordRunning(t *testing.T) {
	j := running()
	j.Spec.Dependency = nil
	j.Spec.MemBytes = j.MemBytes
	var b strings.Builder
	if err := JobRecord(&b, j, &Env{Now: testNow}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\n   NodeList=dev[1-2]\n   BatchHost=dev1\n   NumNodes=2 NumCPUs=8 NumTasks=2 ",
		"\n   SubmitTime=2026-03-04T10:00:00 EligibleTime=2026-03-04T10:00:00\n   AccrueTime=2026-03-04T10:00:00\n",
		"LastSchedEval=2026-03-04T10:58:55 Scheduler=Main\n",
		"\n   MinCPUsNode=4 MinMemoryNode=3G MinTmpDiskNode=0\n",
		"\n   Comment=c1 \n",
		"\n   Power=\n   TresPerNode=gres:gpu:2\n   \n\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("scontrol show job of a running job:\n%s\nlacks %q", b.String(), want)
		}
	}
}

// TestJobRecordWholeNodeMemory: --mem=0 (or --mem-per-cpu=0) shows as
// Slurm shows it, MinMemoryNode=0, whatever the job was given.
func TestJobRecordWholeNodeMemory(t *testing.T) {
	j := running()
	j.Spec.MemWholeNode = true
	var b strings.Builder
	if err := JobRecord(&b, j, &Env{Now: testNow}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\n   MinCPUsNode=4 MinMemoryNode=0 MinTmpDiskNode=0\n") {
		t.Errorf("scontrol show job of a --mem=0 job:\n%s", b.String())
	}
}

// TestOtherRecordsEnd: node and partition records end in a blank line,
// keep the trailing spaces Slurm prints after CoresPerSocket and
// Partitions, and a partition lists its TRES.
func TestOtherRecordsEnd(t *testing.T) {
	parts, nodes := sinfoCluster()
	var b strings.Builder
	if err := NodeRecord(&b, &nodes[0], &Env{Now: testNow}); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.HasPrefix(s, "NodeName=dev1 Arch=(null) CoresPerSocket=1 \n   CPUAlloc=") ||
		!strings.Contains(s, "\n   Partitions=") || !strings.HasSuffix(s, "\n\n") || strings.HasSuffix(s, "\n\n\n") {
		t.Errorf("scontrol show node:\n%q", s)
	}
	b.Reset()
	if err := PartitionRecord(&b, &parts[0], nodes, &Env{OneLiner: true}); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, " TRES=cpu=8,mem=16G,node=4,billing=8\n") {
		t.Errorf("scontrol -o show partition:\n%q", s)
	}
}
