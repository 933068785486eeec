package shim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/cgroup"
	"github.com/corral-hpc/corral/internal/fsutil"
)

// Names inside a job directory.
const (
	JobFile     = "launch.json"
	PidFile     = "shim.pid"
	StartedFile = "started"
	ResultFile  = "result.json"
	LogFile     = "shim.log"
	ScriptFile  = "script"
	RootfsDir   = "rootfs"
	// CtlDir holds the job's controller socket, which noded serves and
	// the container sees at api.DefaultSocket.
	CtlDir = "ctl"
	// SpawnFile names the shim's copy of corral-init's spawn socket
	// while the container starts ("<shim PID> <fd>"): a step's runner
	// that comes before the container runs queues its tasks there
	// (stepearly.go).
	SpawnFile = "spawn"
)

// Job is launch.json: the launch request and what noded decided for it.
type Job struct {
	Launch api.LaunchRequest `json:"launch"`
	Node   string            `json:"node"`
	// Cpuset lists the host cores the job may run on; Slots are noded's
	// logical CPUs behind them (kept so a restarted noded knows them).
	Cpuset string `json:"cpuset"`
	Slots  []int  `json:"slots"`
	// MaxPids limits the job's processes and threads.
	MaxPids    int64 `json:"max_pids"`
	KillWaitMs int64 `json:"kill_wait_ms"`
	// InitPath is corral-init on the host.
	InitPath string `json:"init_path"`
	// RuncRoot is libcontainer's state root; the container ID is ContainerID.
	RuncRoot string `json:"runc_root"`
	// CgroupPath is the job's cgroup: its own (cgroup.JobName), or that of
	// the spare it was handed to when Prepared is set (cgroup.SpareName):
	// cgroup v2 cannot rename a cgroup, so an adopted container keeps the
	// one it was prepared in. Whatever needs the job's cgroup reads it here.
	CgroupPath string `json:"cgroup_path"`
	// Prepared is the token of the prepared spare noded handed the job to
	// (Preparation.Fits said yes): that spare adopts its container for
	// the job instead of starting one (prepared.go).
	Prepared string `json:"prepared,omitempty"`
	// Hide lists host paths masked inside the container (noded's state).
	Hide []string `json:"hide,omitempty"`
	// CtlSocket says noded serves the job's controller socket in CtlDir:
	// the shim binds it into the container and names it in the job's
	// environment.
	CtlSocket bool `json:"ctl_socket,omitempty"`
	// ImageRootfs is the unpacked image the job runs in ("": the host
	// view); ImageEnv are the image's variables. When noded's store did
	// not hold Launch.Image, ImageRootfs is empty and the shim pulls the
	// image into ImageStore first.
	ImageStore string `json:"image_store,omitempty"`
	// ImagePullMax bounds that pull's unpacked size (images.ErrTooBig).
	ImagePullMax int64    `json:"image_pull_max,omitempty"`
	ImageRootfs  string   `json:"image_rootfs,omitempty"`
	ImageEnv     []string `json:"image_env,omitempty"`

	// ImageRegistries are the registries that pull may use
	// (images.Store.Registries).
	ImageRegistries []string `json:"image_registries,omitempty"`

	// MountRoots are the host directories --mount sources must lie under.
	MountRoots []string `json:"mount_roots,omitempty"`
	// GPU is set for a job with GPU shares on this node.
	GPU *GPUSetup `json:"gpu,omitempty"`
}

// ContainerID names a job's container in RuncRoot.
func ContainerID(jobID uint64) string { return fmt.Sprintf("job%d", jobID) }

// limits are the job's cgroup limits on this node, for a container
// started (run) or adopted (prepared.go) alike.
func (j *Job) limits() cgroup.Limits {
	return cgroup.Limits{Cpuset: j.Cpuset, CPUs: j.Launch.CPUs, MemBytes: j.Launch.MemBytes, MaxPids: j.MaxPids}
}

// KillWait is the grace between SIGTERM and SIGKILL.
func (j *Job) KillWait() time.Duration { return time.Duration(j.KillWaitMs) * time.Millisecond }

// Result is result.json: how the job ended.
type Result struct {
	State        api.JobState `json:"state"`
	ExitCode     int          `json:"exit_code"`
	Signal       int          `json:"signal,omitempty"`
	PeakMemBytes int64        `json:"peak_mem_bytes"`
	CPUTimeUsec  int64        `json:"cpu_time_usec"`
	OOMKills     int64        `json:"oom_kills"`
	// StepOOMKills are those of OOMKills that the job's steps counted as
	// theirs (stepoom.go); only the others make the job OUT_OF_MEMORY.
	StepOOMKills int64 `json:"step_oom_kills,omitempty"`
	// Message says why a job failed outside its own code.
	Message string `json:"message,omitempty"`
	// Start is zero when the job's process never ran.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// WriteJob writes launch.json.
func WriteJob(dir string, j *Job) error { return replaceJSON(dir, JobFile, j) }

// ReadJob reads launch.json.
func ReadJob(dir string) (*Job, error) {
	var j Job
	if err := readJSON(dir, JobFile, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// WriteResult writes result.json atomically.
func WriteResult(dir string, r *Result) error { return writeJSON(dir, ResultFile, r) }

// ReadResult reads result.json; os.ErrNotExist means the shim wrote none.
func ReadResult(dir string) (*Result, error) {
	var r Result
	if err := readJSON(dir, ResultFile, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

func readJSON(dir, name string, v any) error {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
	}
	return nil
}

// writeJSON writes dir/name through a temporary file, fsync and rename, so
// a reader sees either nothing or the whole file.
func writeJSON(dir, name string, v any) error { return putJSON(fsutil.WriteFileAtomic, dir, name, v) }

// replaceJSON is writeJSON for files that need not survive the host
// (fsutil.ReplaceFile): a job's launch, a step's own files.
func replaceJSON(dir, name string, v any) error { return putJSON(fsutil.ReplaceFile, dir, name, v) }

func putJSON(write func(string, []byte, os.FileMode) error, dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return write(filepath.Join(dir, name), append(b, '\n'), 0o600)
}

// WriteFileAtomic replaces path with data, whole or not at all.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	return fsutil.WriteFileAtomic(path, data, mode)
}
