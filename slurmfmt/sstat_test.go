package slurmfmt

import (
	"bytes"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// sstat's figures over a step's tasks (sstat(1)): the largest and where
// (node, task rank), the smallest CPU time, and the means; fields corral
// does not measure print empty.
func TestSstatFields(t *testing.T) {
	st := &api.StepStats{JobID: 9, StepID: 2, Nodes: []string{"dev1", "dev2"}, Tasks: []api.TaskStats{
		{Rank: 0, Node: "dev1", RSSBytes: 1 << 20, MaxRSSBytes: 2 << 20, VMSizeBytes: 10 << 20, MaxVMSizeBytes: 12 << 20, CPUUsec: 3_400_000, Pages: 2, PIDs: []int{100}},
		{Rank: 1, Node: "dev2", RSSBytes: 3 << 20, MaxRSSBytes: 3 << 30, VMSizeBytes: 30 << 20, MaxVMSizeBytes: 4 << 30, CPUUsec: 65_000_000, Pages: 4096, PIDs: []int{200}},
	}}
	l, err := ParseSstatFormat("JobID,maxrss,MaxRSSNode,MaxRSSTask,AveRSS,MaxVMSize,MaxVMSizeTask,AveVMSize,MinCPU,MinCPUNode,MinCPUTask,AveCPU,MaxPages,MaxPagesTask,AvePages,NTasks,Nodelist,Pids,MaxDiskRead")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteSstat(&b, l, []*api.StepStats{st}, AcctStyle{Parsable: true, NoEnding: true}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	want := "9.2|3G|dev2|1|2M|4G|1|20M|00:03.000|dev1|0|00:34.000|4K|1|2.00K|2|dev[1-2]|100,200|"
	if len(lines) != 3 || lines[1] != want {
		t.Errorf("sstat line:\n%s\nwant:\n%s", b.String(), want)
	}
	if !strings.HasPrefix(lines[0], "JobID|MaxRSS|MaxRSSNode|") {
		t.Errorf("header: %s", lines[0])
	}
	if _, err := ParseSstatFormat("JobID,Elapsed"); err == nil || err.Error() != `Invalid field requested: "Elapsed"` {
		t.Errorf("an unknown field: %v", err)
	}
	if _, err := ParseSstatFormat(SstatDefault); err != nil {
		t.Errorf("the default list: %v", err)
	}
}
