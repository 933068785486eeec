package shim_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/noded/shim"
)

// TestControllerSocketEnvironment: a job with a socket from noded names
// it in CORRAL_SOCKET, in the batch step and in every task, whatever the
// submitter's or srun's environment said, and loses the variables that
// would send the commands elsewhere; a job without one keeps them.
func TestControllerSocketEnvironment(t *testing.T) {
	outside := []string{api.SocketEnv + "=/tmp/dev/ctld.sock", api.CtldEnv + "=https://ctl:6817",
		api.CredentialSocketEnv + "=/run/corral/noded-x.sock", "KEEP=1"}
	job := &shim.Job{Node: "n1", CtlSocket: true,
		Launch: api.LaunchRequest{JobID: 3, CPUs: 1, NodeList: []string{"n1"}, Env: outside}}
	step := &shim.StepJob{Node: "n1", Ranks: []int{0}, Launch: api.StepLaunch{Env: outside,
		Credential: api.StepCredential{JobID: 3, Layout: []api.StepNode{{Node: "n1", Ranks: []int{0}, CPUs: 1}}}}}
	check := func(what string, env []string, want []string, gone []string) {
		t.Helper()
		for _, kv := range want {
			if !slices.Contains(env, kv) {
				t.Errorf("%s: no %s in %v", what, kv, env)
			}
		}
		for _, kv := range env {
			k, _, _ := strings.Cut(kv, "=")
			if slices.Contains(gone, k) {
				t.Errorf("%s: %s is still set", what, kv)
			}
		}
	}
	mine := []string{api.SocketEnv + "=" + api.DefaultSocket, "KEEP=1"}
	gone := []string{api.CtldEnv, api.CredentialSocketEnv}
	check("batch", shim.Environment(job), mine, gone)
	check("task", shim.TaskEnv(job, step, 0, 0), mine, gone)

	job.CtlSocket = false
	check("batch without a socket", shim.Environment(job), outside, nil)
}
