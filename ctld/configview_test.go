package ctld

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/config"
)

// entries is a view's settings as KEY=VALUE lines, the host left out.
func entries(v api.ClusterConfig) string {
	var out []string
	for _, e := range v.Entries {
		if e.Key != "SlurmctldHost[0]" {
			out = append(out, e.Key+"="+e.Value)
		}
	}
	return strings.Join(out, "\n")
}

// The settings scontrol show config prints come from corral.conf and the
// controller's options, in Slurm's names and spellings.
func TestConfigView(t *testing.T) {
	for _, tc := range []struct {
		conf string
		cfg  Config
		want string
	}{
		{"", Config{AllocIdleLimit: -1}, "ClusterName=corral\nInactiveLimit=0 sec\nJobRequeue=0\n" +
			"PriorityDecayHalfLife=7-00:00:00\nPriorityFavorSmall=No\nPriorityFlags=\nPriorityMaxAge=12:00:00\n" +
			"PriorityUsageResetPeriod=NONE\nPriorityType=priority/multifactor\nPriorityWeightAge=1000\n" +
			"PriorityWeightFairShare=10000\nPriorityWeightJobSize=100\nSchedulerType=sched/backfill\nSelectType=select/cons_tres"},
		{"PriorityWeightAge=5 PriorityDecayHalfLife=1-12:00:00 PriorityUsageResetPeriod=WEEKLY FairshareAlgorithm=classic PriorityFavorSmall=YES\nSchedulerType=sched/builtin\n",
			Config{AllocIdleLimit: 90 * time.Second, Pipeline: PipelineConfig{RequeueOnNodeFail: true}},
			"ClusterName=corral\nInactiveLimit=90 sec\nJobRequeue=1\n" +
				"PriorityDecayHalfLife=1-12:00:00\nPriorityFavorSmall=Yes\nPriorityFlags=NO_FAIR_TREE\nPriorityMaxAge=12:00:00\n" +
				"PriorityUsageResetPeriod=WEEKLY\nPriorityType=priority/multifactor\nPriorityWeightAge=5\n" +
				"PriorityWeightFairShare=10000\nPriorityWeightJobSize=100\nSchedulerType=sched/builtin\nSelectType=select/cons_tres"},
		{"PriorityType=basic\n", Config{}, "ClusterName=corral\nInactiveLimit=0 sec\nJobRequeue=0\n" +
			"PriorityType=priority/basic\nSchedulerType=sched/backfill\nSelectType=select/cons_tres"},
	} {
		file, err := config.ParseFile(strings.NewReader("PartitionName=batch Nodes=ALL\n"+tc.conf), "corral.conf")
		if err != nil {
			t.Fatalf("%q: %v", tc.conf, err)
		}
		v := configView(file, &tc.cfg, file.Scheduling.Planner, time.Now())
		if got := entries(v); got != tc.want {
			t.Errorf("%q:\n%s\nwant:\n%s", tc.conf, got, tc.want)
		}
		if last := v.Entries[len(v.Entries)-1]; last.Key != "SlurmctldHost[0]" || last.Value == "" {
			t.Errorf("%q: last entry %+v, want the controller's host", tc.conf, last)
		}
	}
}

// Any user reads the configuration.
func TestConfigRoute(t *testing.T) {
	tc := MustServer(t)
	code, body := callAs(t, tc, nobody, http.MethodGet, "/v1/config", nil)
	var v api.ClusterConfig
	if code != http.StatusOK || json.Unmarshal(body, &v) != nil || len(v.Entries) == 0 || v.Entries[0].Key != "ClusterName" || v.Loaded.IsZero() {
		t.Fatalf("GET /v1/config as nobody: %d %s", code, body)
	}
}
