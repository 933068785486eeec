package nodedtest

import (
	"time"

	"github.com/corral-hpc/corral/api"
)

// StepLaunch is a launch of step job.step as ctld would authorize it:
// one task (rank 0) on node, for uid, valid for ttl, signed with key,
// running argv with output to a (never dialled) local address.
func StepLaunch(key []byte, node string, job uint64, step int, uid uint32, ttl time.Duration, argv ...string) api.StepLaunch {
	c := api.StepCredential{JobID: job, StepID: step, UID: uid, GID: uid, Tasks: 1,
		Layout:  []api.StepNode{{Node: node, Ranks: []int{0}, CPUs: 1}},
		Expires: time.Now().Add(ttl)}
	api.SignCredential(&c, key)
	return api.StepLaunch{Credential: c, Argv: argv, Env: []string{"PATH=/usr/bin:/bin"}, Cwd: "/",
		IOAddr: "127.0.0.1:9", IOToken: "token"}
}
