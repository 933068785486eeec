package cli

import (
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/slurmopt"
)

// clusterOptions are -M/--clusters (and --cluster) for the commands that
// read the cluster: squeue, sinfo, sacct, sprio and sshare.
var clusterOptions = []slurmopt.Option{
	{Short: 'M', Long: "clusters", Arg: slurmopt.RequiredArg},
	{Long: "cluster", Arg: slurmopt.RequiredArg},
}

// clustersGiven reads -M: corral is one cluster, api.ClusterName, which
// -M may name (or all) without changing what is listed; squeue, sinfo
// and sshare then print Slurm's "CLUSTER: NAME" line first. Another name
// is Slurm's error for a cluster it cannot reach.
func clustersGiven(r *slurmopt.Result) (bool, error) {
	names := append(r.All("clusters"), r.All("cluster")...)
	for _, v := range names {
		for _, name := range strings.Split(v, ",") {
			if !strings.EqualFold(name, "all") && !strings.EqualFold(name, api.ClusterName) {
				return false, slurmErrorf("'%s' can't be reached now, or it is an invalid entry for --cluster.  "+
					"Use 'sacctmgr list clusters' to see available clusters.", v)
			}
		}
	}
	return len(names) > 0, nil
}

// clusterLine is the line squeue, sinfo and sshare print first when -M
// names the cluster.
const clusterLine = "CLUSTER: " + api.ClusterName + "\n"
