package shim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/noded/shim"
)

// TestJobUmask: the job runs with the submitter's umask and sees it as
// SLURM_UMASK; its output file is created under it too. A launch without
// one (an older ctld) keeps 0022; a bad one fails the job.
func TestJobUmask(t *testing.T) {
	const script = "umask; echo $SLURM_UMASK; touch f; mkdir d; stat -c %a f d\n"
	for _, tc := range []struct {
		umask, want string
		outMode     os.FileMode
	}{
		{"0077", "0077|0077|600|700", 0o600},
		{"0027", "0027|0027|640|750", 0o640},
		{"0002", "0002|0002|664|775", 0o664},
		{"", "0022|0022|644|755", 0o644},
	} {
		t.Run("umask "+tc.umask, func(t *testing.T) {
			tj := mustJob(t, script, func(j *shim.Job) { j.Launch.Umask = tc.umask })
			r := tj.run(t, shim.Controls{})
			if got := strings.Join(strings.Fields(tj.output(t)), "|"); r.State != api.StateCompleted || got != tc.want {
				t.Errorf("job saw %q, want %q (%+v)", got, tc.want, r)
			}
			st, err := os.Stat(filepath.Join(tj.work, fmt.Sprintf("corral-%d.out", tj.job.Launch.JobID)))
			if err != nil || st.Mode().Perm() != tc.outMode {
				t.Errorf("output file mode %v (%v), want %v", st.Mode().Perm(), err, tc.outMode)
			}
		})
	}
	tj := mustJob(t, "true\n", func(j *shim.Job) { j.Launch.Umask = "0999" })
	if r := tj.run(t, shim.Controls{}); r.State != api.StateFailed || !strings.Contains(r.Message, "umask") {
		t.Errorf("a launch with umask 0999: %+v, want FAILED naming the umask", r)
	}
}
