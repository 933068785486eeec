package shim

import (
	"testing"

	"github.com/corral-hpc/corral/api"
)

// TestPreparationFits: a job adopts a prepared container only when every
// field that the container fixed at its creation matches (each one is
// changed alone and must refuse), while the fields adoption sets (limits,
// sizes, binds, the job's name and environment) may differ.
func TestPreparationFits(t *testing.T) {
	base := func() *Job {
		return &Job{
			Launch: api.LaunchRequest{JobID: 1, Role: api.RoleExtern, UID: 1000, GID: 1000, Groups: []uint32{1000, 27},
				Umask: "0022", WorkDir: "/home/u", Home: "/home/u", CPUs: 1, MemBytes: 1 << 30},
			InitPath: "/usr/lib/corral/corral-init", RuncRoot: "/var/lib/corral/runc", Hide: []string{"/var/lib/corral"},
			MaxPids: 4096, Cpuset: "0", CgroupPath: "corral-n-job1", CtlSocket: true,
		}
	}
	p := PreparationFor(base())
	if !p.Fits(base()) {
		t.Fatal("a job does not fit the preparation made from it")
	}
	for _, tc := range []struct {
		name string
		edit func(*Job)
		fits bool
	}{
		// What the prepared container fixed: each alone refuses.
		{"batch role", func(j *Job) { j.Launch.Role = api.RoleBatch }, false},
		{"empty role (batch)", func(j *Job) { j.Launch.Role = "" }, false},
		{"an image", func(j *Job) { j.Launch.Image = "docker.io/library/alpine" }, false},
		{"an unpacked image", func(j *Job) { j.ImageRootfs = "/var/lib/corral/images/x" }, false},
		{"GPU shares", func(j *Job) { j.Launch.GPUs = []api.GPUShare{{Device: 0, AmountHundredths: 100}} }, false},
		{"a GPU setup", func(j *Job) { j.GPU = &GPUSetup{} }, false},
		{"another uid", func(j *Job) { j.Launch.UID = 1001 }, false},
		{"another gid", func(j *Job) { j.Launch.GID = 1001 }, false},
		{"one group more", func(j *Job) { j.Launch.Groups = append(j.Launch.Groups, 44) }, false},
		{"one group less", func(j *Job) { j.Launch.Groups = j.Launch.Groups[:1] }, false},
		{"no groups", func(j *Job) { j.Launch.Groups = nil }, false},
		{"another umask", func(j *Job) { j.Launch.Umask = "0077" }, false},
		{"a bad umask", func(j *Job) { j.Launch.Umask = "9" }, false},
		{"another corral-init", func(j *Job) { j.InitPath = "/opt/corral-init" }, false},
		{"another runc root", func(j *Job) { j.RuncRoot = "/run/other" }, false},
		{"more hidden paths", func(j *Job) { j.Hide = append(j.Hide, "/secret") }, false},
		{"no hidden paths", func(j *Job) { j.Hide = nil }, false},
		// What adoption sets, or what does not reach the container.
		{"groups in another order, repeated", func(j *Job) { j.Launch.Groups = []uint32{27, 1000, 27} }, true},
		{"the default umask spelt empty", func(j *Job) { j.Launch.Umask = "" }, true},
		{"another job", func(j *Job) { j.Launch.JobID = 99 }, true},
		{"other limits", func(j *Job) { j.Launch.CPUs, j.Launch.MemBytes, j.Cpuset, j.MaxPids = 4, 8<<30, "0-3", 10 }, true},
		{"other sizes", func(j *Job) { j.Launch.ShmBytes = 1 << 30 }, true},
		{"another work dir and home", func(j *Job) { j.Launch.WorkDir, j.Launch.Home = "/scratch/u", "/nfs/u" }, true},
		{"mounts", func(j *Job) { j.Launch.Mounts = []api.Mount{{Source: "/data", Target: "/data"}} }, true},
		{"another environment", func(j *Job) { j.Launch.Env = []string{"A=b"} }, true},
		{"another time limit", func(j *Job) { j.Launch.TimeLimit = 60 }, true},
		{"no controller socket", func(j *Job) { j.CtlSocket = false }, true},
		{"another cgroup", func(j *Job) { j.CgroupPath = "corral-n-spareab" }, true},
	} {
		j := base()
		tc.edit(j)
		if got := p.Fits(j); got != tc.fits {
			t.Errorf("%s: Fits = %v, want %v", tc.name, got, tc.fits)
		}
	}
	var none *Preparation
	if none.Fits(base()) || p.Fits(nil) {
		t.Error("a nil preparation or job fits")
	}
}
