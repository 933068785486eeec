package noded

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/noded/shim"
)

// A prepared spare is a spare shim that, while it waits, starts the
// container of an extern job (an allocation's part: srun or salloc
// outside one, a multi-node job's other nodes) for the identity of the
// last such job launched here (shim.Preparation). A launch that Fits it
// is placed in the spare's cgroup and hands the spare its job with
// Prepared set; the spare then adopts the container instead of starting
// one, which takes runc's 50 ms off the job's start. Any other launch
// still takes the spare, which destroys what it prepared off the job's
// path. After a launch that fits a preparation the next spare is a
// prepared one; after any other, a plain one, so a node running batch
// jobs prepares nothing it throws away.
//
// Each preparation has a directory <state>/spares/<token>, with the
// spare's PID and start time in its owner file (written here before the
// spare learns of it, so a directory never lacks one) and the
// container's root. A spare removes it when it ends; one that died
// leaves it, and sweepSpares removes it and its container.

// sparesDir is <state>/spares.
func (d *Daemon) sparesDir() string { return filepath.Join(d.cfg.StateDir, shim.SparesDir) }

// nextPreparation is what the spare after job sj's launch prepares: a
// container for sj's identity when sj could adopt one, else nothing.
func nextPreparation(sj *shim.Job) *shim.Preparation {
	p := shim.PreparationFor(sj)
	if !p.Fits(sj) {
		return nil
	}
	return p
}

// prepareSpare gives the just started spare s a token, a directory (its
// owner file naming s) and a cgroup, and sends it want so completed
// (spare.go in package shim). On error s stays a plain spare.
func (d *Daemon) prepareSpare(s *spareShim, want *shim.Preparation) (*shim.Preparation, error) {
	p := *want
	p.Token = randomID()
	p.Dir = filepath.Join(d.sparesDir(), p.Token)
	place, err := d.cg.Place(cgroup.SpareName(d.cgScope, p.Token))
	if err != nil {
		return nil, err
	}
	p.CgroupPath = place.Path
	start, err := shim.ProcStart(s.cmd.Process.Pid)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(p.Dir, 0o700); err != nil {
		return nil, err
	}
	owner := fmt.Appendf(nil, "%d %d\n", s.cmd.Process.Pid, start)
	if err := os.WriteFile(filepath.Join(p.Dir, shim.OwnerFile), owner, 0o600); err != nil {
		_ = os.RemoveAll(p.Dir)
		return nil, err
	}
	line, err := json.Marshal(&p)
	if err == nil {
		_, err = s.job.Write(append(line, '\n'))
	}
	if err != nil {
		// The spare died, or will read a job directory as its first
		// line: either way it prepares nothing, and its directory goes.
		_ = os.RemoveAll(p.Dir)
		return nil, err
	}
	return &p, nil
}

// sparePlacement is the cgroup of the job sj about to be launched, with
// d.mu held: the current spare's when sj Fits what it prepared (and
// sj.Prepared is then its token), else the job's own.
func (d *Daemon) sparePlacement(sj *shim.Job) (cgroup.Placement, error) {
	if s := d.spare; s != nil && s.prep.Fits(sj) {
		sj.Prepared = s.prep.Token
		return d.cg.Place(cgroup.SpareName(d.cgScope, s.prep.Token))
	}
	return d.cg.Place(cgroup.JobName(d.cgScope, sj.Launch.JobID))
}

// sweepSpares removes what dead spares left in the spares directory:
// each directory whose owner is not alive loses its container (if a job
// adopted it, its state was renamed: nothing to do) and goes. noded
// calls it at start and whenever it finds a shim that came from a spare
// dead.
func (d *Daemon) sweepSpares() {
	ents, err := os.ReadDir(d.sparesDir())
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			d.log.Printf("spares: %v", err)
		}
		return
	}
	for _, e := range ents {
		if dir := filepath.Join(d.sparesDir(), e.Name()); e.IsDir() && shim.OwnerPid(dir) == 0 {
			d.removeSpare(dir)
		}
	}
}

// removeSpare removes the container and the directory of the dead spare
// whose directory is dir.
func (d *Daemon) removeSpare(dir string) {
	token := filepath.Base(dir)
	if err := container.Remove(d.runcRoot, shim.SpareContainerID(token)); err != nil {
		d.log.Printf("spare %s: removing its container: %v", token, err)
	}
	if err := container.RemoveTree(dir); err != nil {
		d.log.Printf("spare %s: %v", token, err)
	}
}
