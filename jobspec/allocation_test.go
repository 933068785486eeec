package jobspec

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// salloc's options are sbatch's; the first word that is not an option
// starts the command, whose own options stay its own.
func TestParseAllocation(t *testing.T) {
	r, cmd, err := ParseAllocation([]string{"-N", "2", "-c2", "--mem=1G", "-t", "10", "-J", "dbg", "srun", "-l", "hostname"}, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s := r.Spec
	if !s.Allocation || s.Nodes != 2 || s.CPUs != 2 || s.MemBytes != 1<<30 || s.TimeLimit != 600 || s.Name != "dbg" || s.Script != "" || s.Output != "" {
		t.Fatalf("spec = %+v", s)
	}
	if !slices.Equal(cmd, []string{"srun", "-l", "hostname"}) {
		t.Fatalf("command = %q", cmd)
	}
	if err := Validate(&s); err == nil || !strings.Contains(err.Error(), "work directory") {
		t.Fatalf("validate without a work dir: %v", err) // the caller fills it
	}
	s.WorkDir = "/tmp"
	if err := Validate(&s); err != nil {
		t.Fatalf("validate: %v", err)
	}

	r, cmd, err = ParseAllocation(nil, nil, time.Now())
	if err != nil || len(cmd) != 0 || r.Spec.Name != "interactive" || r.Spec.Nodes != 0 {
		t.Fatalf("no options: %+v %q %v", r, cmd, err)
	}
	if r, _, _ = ParseAllocation([]string{"/usr/bin/bash"}, nil, time.Now()); r.Spec.Name != "bash" {
		t.Fatalf("name from the command = %q", r.Spec.Name)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--wrap", "true"}, "--wrap is for batch scripts"},
		{[]string{"--bogus"}, "bogus"},
		{[]string{"-t", "never", "sh"}, "time"},
	} {
		if _, _, err := ParseAllocation(tt.args, nil, time.Now()); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.args, err, tt.want)
		}
	}
}

// salloc reads its SALLOC_ input variables, not sbatch's, and its command
// line overrides them, as salloc(1) says.
func TestParseAllocationInputVariables(t *testing.T) {
	env := func(vars map[string]string) LookupFunc {
		return func(name string) (string, bool) { v, ok := vars[name]; return v, ok }
	}
	vars := map[string]string{"SALLOC_PARTITION": "debug", "SALLOC_TIMELIMIT": "5", "SALLOC_ACCOUNT": "phys",
		"SBATCH_QOS": "ignored-by-salloc"}
	r, _, err := ParseAllocation([]string{"-t", "7", "sh"}, env(vars), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Spec; s.Partition != "debug" || s.Account != "phys" || s.TimeLimit != 420 || s.QOS != "" {
		t.Fatalf("spec = partition %q account %q time %d qos %q", s.Partition, s.Account, s.TimeLimit, s.QOS)
	}
	_, _, err = ParseAllocation(nil, env(map[string]string{"SALLOC_TIMELIMIT": "never"}), time.Now())
	if err == nil || !strings.Contains(err.Error(), "SALLOC_TIMELIMIT") {
		t.Fatalf("a bad SALLOC_TIMELIMIT: %v, want an error naming it", err)
	}
	for _, v := range sallocVariables {
		if _, ok := sallocOptions["SALLOC_"+v]; !ok {
			t.Errorf("SALLOC_%s stands for no sbatch option", v)
		}
	}
}
