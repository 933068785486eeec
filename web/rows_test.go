package web

import (
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// TestSessionConfiguration: the configuration column says what the
// session holds, as the seeds write it (seed 003's 0.5 fGPU, seed 002's
// 256 MB), with its shared memory, image and mounts where it has them.
func TestSessionConfiguration(t *testing.T) {
	for _, tc := range []struct {
		name string
		job  api.Job
		want string
	}{
		{"seed 002", api.Job{CPUs: 1, MemBytes: 256 << 20, Spec: api.JobSpec{ContainerImage: "fw:2.2"}}, "1 CPU, 256 MiB, fw:2.2"},
		{"seed 003", api.Job{CPUs: 2, MemBytes: 4 << 30, FGPUHundredths: 50}, "2 CPU, 4 GiB, 0.5 fGPU"},
		{"two nodes", api.Job{CPUs: 2, NodeCount: 2, MemBytes: 3 << 29}, "4 CPU, 3 GiB"},
		{"a GiB and a half", api.Job{CPUs: 1, MemBytes: 3 << 29}, "1 CPU, 1.5 GiB"},
		{"shared memory and mounts", api.Job{CPUs: 1, MemBytes: 1 << 30, Spec: api.JobSpec{ShmBytes: 64 << 20,
			Mounts: []api.Mount{{Source: "/data/a", Target: "/a"}, {Source: "/data/b", Target: "/b", ReadOnly: true}}}},
			"1 CPU, 1 GiB, shm 64 MiB, /data/a:/a, /data/b:/b:ro"},
	} {
		if got := rowOf(&tc.job, time.Now()).Config; got != tc.want {
			t.Errorf("%s: configuration %q, want %q", tc.name, got, tc.want)
		}
	}
}
