package noded

import (
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/corral-hpc/corral/noded/shim"
)

// recoverSteps takes up the step runners of a job an earlier noded
// started: a step whose end was queued then is left alone; a result.json
// not yet reported is reported (the step ended while noded was away); a
// live runner is supervised again; a step with neither lost its runner
// while noded was down and ends FAILED.
func (d *Daemon) recoverSteps(j *job) {
	ents, err := os.ReadDir(filepath.Join(j.dir, shim.StepsDir))
	if err != nil {
		if !os.IsNotExist(err) {
			d.log.Printf("job %d: its steps: %v", j.id, err)
		}
		return
	}
	for _, e := range ents {
		id, err := strconv.Atoi(e.Name())
		if err != nil || id < 0 || !e.IsDir() {
			continue
		}
		st := &step{job: j.id, id: id, jobDir: j.dir, dir: filepath.Join(j.dir, shim.StepsDir, e.Name()), done: make(chan struct{})}
		if _, err := os.Stat(filepath.Join(st.dir, reportedFile)); err == nil {
			continue
		}
		if res, end, err := readStepResult(st.dir); err == nil {
			d.log.Printf("%s ended while noded was away (exit code %d); reporting it", st, res.ExitCode)
			d.reportStep(st, res, end)
			continue
		}
		if pid := runnerPid(st); pid > 0 {
			d.log.Printf("%s is still running under runner %d from an earlier noded; reattaching", st, pid)
			st.pid = pid
			j.steps[id] = st
			d.supervisors.Add(1)
			go d.reattachStep(j, st)
			continue
		}
		d.reportStep(st, &shim.StepResult{ExitCode: 1, Message: "the step's runner ended without a result while noded was down" +
			logTail(filepath.Join(st.dir, runnerLogFile))}, time.Time{})
	}
}

// recoverEndedSteps reports the steps of a job that ended while noded was
// away (or whose shim died), stopping runners still there, before the job
// directory goes.
func (d *Daemon) recoverEndedSteps(id uint64, dir string) {
	j := &job{id: id, dir: dir, steps: map[int]*step{}}
	d.recoverSteps(j)
	d.endSteps(j)
}
