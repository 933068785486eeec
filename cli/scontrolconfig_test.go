package cli

import "testing"

// scontrol show config prints the controller's settings in Slurm's
// layout; a parameter after it is ignored, as Slurm's scontrol does.
func TestScontrolShowConfig(t *testing.T) {
	f := MustFakeCtld(t)
	want := "Configuration data as of 2026-03-04T10:00:00\n" +
		"ClusterName             = corral\n" +
		"SlurmctldHost[0]        = head\n" +
		"\nSlurmctld(primary) at head is UP\n"
	for _, args := range [][]string{{"show", "config"}, {"show", "config", "ClusterName"}} {
		if r := f.slurm(t, "", "scontrol", args...); r.code != 0 || r.stdout != want {
			t.Errorf("scontrol %v: exit %d\n%s\nwant\n%s\nstderr %q", args, r.code, r.stdout, want, r.stderr)
		}
	}
}
