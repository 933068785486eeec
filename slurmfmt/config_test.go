package slurmfmt

import (
	"bytes"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// scontrol show config's layout (config_info.c: "%-23s = %s"), with a
// key longer than the pad kept whole.
func TestWriteConfig(t *testing.T) {
	c := &api.ClusterConfig{Loaded: *at("2026-03-04T10:00:00"), Entries: []api.ConfigEntry{
		{Key: "ClusterName", Value: "corral"}, {Key: "PriorityUsageResetPeriod", Value: "NONE"},
		{Key: "PriorityFlags", Value: ""}, {Key: "SlurmctldHost[0]", Value: "head"},
	}}
	var b bytes.Buffer
	if err := WriteConfig(&b, c, &Env{Now: testNow}); err != nil {
		t.Fatal(err)
	}
	want := "Configuration data as of 2026-03-04T10:00:00\n" +
		"ClusterName             = corral\n" +
		"PriorityUsageResetPeriod = NONE\n" +
		"PriorityFlags           = \n" +
		"SlurmctldHost[0]        = head\n" +
		"\nSlurmctld(primary) at head is UP\n"
	if b.String() != want {
		t.Errorf("show config:\n%s\nwant:\n%s", b.String(), want)
	}
}
