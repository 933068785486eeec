package shim

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"

	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/container/initproto"
	"github.com/corral-hpc/corral/internal/fsutil"
)

// A spare shim handed a Preparation (spare.go) starts, before any job,
// the container an extern job of that identity would get, less what
// depends on the job: no limits but the pids one, no binds but
// corral-init's, /tmp and /dev/shm at their defaults, corral-init
// holding with stdio on /dev/null and no environment but PATH. A job
// that Fits adopts it (container.Adopt: its binds attached, its limits
// set, /tmp and /dev/shm resized, the state renamed to the job's
// container ID), so runc's start is off that job's path; the cgroup
// keeps the spare's name, which noded wrote in the job's launch.json. A
// job that does not fit runs the usual way, and the prepared container
// is destroyed. Nothing of the user's is mounted and no code of the
// user's runs in it until a job adopts it (docs/security.md).

// prepared is a spare's prepared container until a job adopts it or it
// is destroyed.
type prepared struct {
	p      *Preparation
	c      *container.Container // nil once adopted or destroyed
	report *os.File             // corral-init's report pipe, read end
	spawn  []*os.File           // the steps' spawn socket pair (stepspawn.go)
	// gone is closed once a destruction begun by discard is over.
	gone chan struct{}
}

// prepare starts the container for p: Dir/owner first (so that noded's
// sweep of a dead spare finds what it left), then the container with
// its root in Dir/rootfs. On error nothing is left, Dir included.
func prepare(p *Preparation) (_ *prepared, retErr error) {
	if p.Token == "" || !filepath.IsAbs(p.Dir) || !filepath.IsAbs(p.RuncRoot) || !filepath.IsAbs(p.InitPath) || p.CgroupPath == "" {
		return nil, fmt.Errorf("preparation %+v lacks a token, a directory, a runc root, corral-init or a cgroup", *p)
	}
	umask, err := api.ParseUmask(p.Umask)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(p.Dir, 0o700); err != nil {
		return nil, err
	}
	defer func() {
		if retErr != nil {
			if err := container.RemoveTree(p.Dir); err != nil {
				log.Printf("spare %s: %v", p.Token, err)
			}
		}
	}()
	if err := fsutil.ReplaceFile(filepath.Join(p.Dir, OwnerFile), []byte(pidLine(os.Getpid())), 0o600); err != nil {
		return nil, err
	}
	rootfs := filepath.Join(p.Dir, RootfsDir)
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		return nil, err
	}
	id := Identity{UID: p.UID, GID: p.GID, Groups: p.Groups, Umask: &umask}
	in, out, err := devNull(id)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	defer out.Close()
	reportR, reportW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer reportW.Close()
	spawn, err := spawnPair() // stepspawn.go
	if err != nil {
		reportR.Close()
		return nil, err
	}
	pids := p.MaxPids
	res := &cgroups.Resources{}
	if pids > 0 {
		res.PidsLimit = &pids
	}
	c, err := container.Start(&container.Spec{
		ID:         SpareContainerID(p.Token),
		StateRoot:  p.RuncRoot,
		Rootfs:     rootfs,
		Binds:      []container.Bind{{Source: p.InitPath, Dest: initproto.InitPath}},
		Hide:       p.Hide,
		CgroupPath: p.CgroupPath,
		Resources:  res,
		Args:       []string{initproto.InitPath, initproto.StdioArg, initproto.SpawnArg, initproto.HoldArg},
		Env:        []string{"PATH=" + defaultPath},
		Cwd:        "/",
		UID:        int(p.UID),
		GID:        int(p.GID),
		Umask:      &umask,
		Groups:     intGroups(p.Groups),
		ExtraFiles: []*os.File{reportW, in, out, out, spawn[0], spawn[1]}, // as run's: initproto.StdioArg, SpawnArg
	})
	if err != nil {
		reportR.Close()
		closeFiles(spawn)
		return nil, err
	}
	return &prepared{p: p, c: c, report: reportR, spawn: spawn}, nil
}

// devNull opens /dev/null as the user, for the prepared container's
// stdio (an extern job's, whose tasks bring their own).
func devNull(id Identity) (in, out *os.File, err error) {
	err = AsUser(id, func() error {
		if in, err = os.Open(os.DevNull); err != nil {
			return err
		}
		out, err = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		return err
	})
	if err != nil && in != nil {
		in.Close()
	}
	return in, out, err
}

// adoptable says whether job may adopt the prepared container: noded
// handed it to this spare for it (Prepared), it still fits, and the
// container is there.
func (pr *prepared) adoptable(job *Job) bool {
	return pr != nil && pr.c != nil && job.Prepared == pr.p.Token && pr.p.Fits(job)
}

// adopt gives the prepared container to job (container.Adopt) and
// supervises it to its end as run does a started one. ok is false when
// the adoption failed for a reason the usual start may not share (the
// container is destroyed then, and the job is to be run the usual way);
// a cancel or the time limit during the adoption is the job's end.
func (pr *prepared) adopt(dir string, job *Job, ctl Controls, binds []container.Bind) (res *Result, ok bool) {
	l := &job.Launch
	host, err := cgroup.Detect()
	if err != nil {
		log.Printf("job %d: adopting the prepared container: %v", l.JobID, err)
		pr.destroy()
		return nil, false
	}
	c := pr.c
	// The preparation's CPU time is not the job's.
	before, err := cgroup.ReadUsage(host.Mode, c.CgroupPaths())
	if err != nil {
		log.Printf("job %d: the prepared container's usage: %v", l.JobID, err)
	}
	setup, endWatch := watchSetup(job, ctl)
	err = c.Adopt(&container.Adoption{
		ID:        ContainerID(l.JobID),
		Resources: host.Resources(job.limits()),
		Binds:     binds,
		ShmBytes:  l.ShmBytes,
		Stop:      setup.c,
	})
	endWatch()
	if errors.Is(err, container.ErrStopped) {
		pr.destroy()
		return setup.result(err), true
	}
	if err != nil {
		log.Printf("job %d: adopting the prepared container: %v; starting one", l.JobID, err)
		pr.destroy()
		return nil, false
	}
	pr.c = nil                     // the job's now: toEnd destroys it
	publishSpawn(dir, pr.spawn[1]) // stepearly.go
	return toEnd(dir, job, ctl, &running{c: c, report: pr.report, mode: host.Mode, cpuBefore: before.CPUTimeUsec}), true
}

// destroy kills and removes the prepared container, now.
func (pr *prepared) destroy() {
	if pr.c == nil {
		return
	}
	c := pr.c
	pr.c = nil
	destroyPrepared(pr.p.Token, c)
}

// destroyPrepared ends and removes the prepared container c of spare token.
func destroyPrepared(token string, c *container.Container) {
	_ = c.Signal(unix.SIGKILL)
	_, _ = c.Wait()
	if err := c.Destroy(); err != nil {
		log.Printf("spare %s: destroying the prepared container: %v", token, err)
	}
}

// discard destroys the prepared container, which job will not adopt:
// at once when job's cgroup is the spare's (its start would find the
// cgroup taken), else on a goroutine, off the job's path; release waits
// for it.
func (pr *prepared) discard(job *Job) {
	if pr == nil || pr.c == nil || pr.gone != nil {
		return
	}
	if job.CgroupPath == pr.p.CgroupPath {
		pr.destroy()
		return
	}
	c := pr.c
	pr.c = nil
	pr.gone = make(chan struct{})
	go func() {
		defer close(pr.gone)
		destroyPrepared(pr.p.Token, c)
	}()
}

// release ends what is left of the preparation once its job is over or
// none came: the container unless a job adopted it (the job's end
// destroyed it then), the shim's ends of its pipes, and Dir.
func (pr *prepared) release() {
	if pr == nil {
		return
	}
	pr.destroy()
	if pr.gone != nil {
		<-pr.gone
	}
	pr.report.Close()
	closeFiles(pr.spawn)
	if err := container.RemoveTree(pr.p.Dir); err != nil {
		log.Printf("spare %s: %v", pr.p.Token, err)
	}
}

// OwnerPid is the live spare shim that owns a spares directory (its
// OwnerFile names it with its start time), or 0: the directory is a dead
// spare's, whose container (SpareContainerID) and tree may go. A zombie
// (a killed spare noded has not reaped yet) is dead.
func OwnerPid(spareDir string) int {
	pid, start, err := ReadPidFile(filepath.Join(spareDir, OwnerFile))
	if err != nil || start == 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	if p, ok := parseStat(pid, string(b)); !ok || p.start != start || p.state == 'Z' || p.state == 'X' {
		return 0
	}
	return pid
}
