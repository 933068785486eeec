package ctld

import "github.com/corral-hpc/corral/api"

// addEnvironmentLaunch passes the image and mounts to the node.
func addEnvironmentLaunch(j *job, req *api.LaunchRequest) {
	spec := &j.rec.Job.Spec
	req.Image = spec.ContainerImage
	req.Mounts = spec.Mounts
}
