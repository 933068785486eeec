package config

import (
	"strings"
	"testing"
	"time"
)

func TestPipelineLines(t *testing.T) {
	f := mustParseFile(t, "KillOnInvalidDep=no JobRequeue=1\nMaxArrayTasks=500 AcctRetention=90-0\n")
	p := f.Pipeline
	if p.KillOnInvalidDep == nil || *p.KillOnInvalidDep || p.JobRequeue == nil || !*p.JobRequeue ||
		p.MaxArrayTasks != 500 || p.AcctRetention != 90*24*time.Hour {
		t.Fatalf("pipeline %+v", p)
	}
	if p := mustParseFile(t, "AcctRetention=UNLIMITED\n").Pipeline; p.AcctRetention != -1 || p.KillOnInvalidDep != nil || p.InactiveLimit != nil {
		t.Fatalf("UNLIMITED: %+v", p)
	}
	for text, want := range map[string]time.Duration{"InactiveLimit=60\n": time.Minute, "InactiveLimit=0\n": 0} {
		if p := mustParseFile(t, text).Pipeline; p.InactiveLimit == nil || *p.InactiveLimit != want {
			t.Fatalf("%q: InactiveLimit %v, want %v", text, p.InactiveLimit, want)
		}
	}
	for text, want := range map[string]string{
		"KillOnInvalidDep=maybe\n":           "corral.conf:2: KillOnInvalidDep=maybe: use YES or NO (1 or 0)",
		"JobRequeue=1 PriorityWeightAge=5\n": "corral.conf:2: unknown key PriorityWeightAge on a pipeline line",
		"MaxArrayTasks=0\n":                  "corral.conf:2: MaxArrayTasks=0: give a whole number of tasks from 1",
		"JobRequeue=1\nJobRequeue=0\n":       "corral.conf:3: JobRequeue is already set on line 2",
		"AcctRetention=soon\n":               `corral.conf:2: AcctRetention=soon: invalid time limit "soon"`,
		"InactiveLimit=-1\n":                 "corral.conf:2: InactiveLimit=-1: give whole seconds from 0 (never) to 65533",
		"InactiveLimit=1m\n":                 "corral.conf:2: InactiveLimit=1m: give whole seconds",
	} {
		_, err := ParseFile(strings.NewReader(partitionLine+text), "corral.conf")
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}
