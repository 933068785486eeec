package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Job steps: work started inside a running job's allocation (srun).
//
// The path of a step, as in Slurm:
//
//  1. srun asks ctld for a step (POST /v1/jobs/{id}/steps, user plane,
//     StepRequest). ctld checks that the caller may act on the job and that
//     the step fits the allocation, lays its tasks out over the job's
//     nodes, commits the step record and answers a StepGrant: the layout
//     and a StepCredential signed with the cluster key.
//  2. srun listens on a TCP port of its own host (SLURM_LAUNCH_NODE_IPADDR)
//     and sends a StepLaunch to every node of the layout (POST /v1/steps on
//     the node plane; the credential, not the cluster signature,
//     authorizes it, because srun does not hold the cluster key).
//  3. noded checks the credential, starts one step runner per step
//     (corral-shim step), which starts the node's tasks in the job's
//     running container (the container's corral-init forks them) and connects back to srun's port, speaking package
//     stepio: output and exits one way, input, signals and window sizes
//     the other.
//  4. When the node's tasks have ended the runner writes the step's result
//     and noded reports it (EventStepEnded, with StepID), durably, as it
//     reports job ends. ctld ends the step when every node has reported.

// Step IDs with a meaning of their own, as Slurm prints them (JOB.batch,
// JOB.extern); user steps count up from 0.
const (
	StepBatch  = -5 // the batch script (SLURM_BATCH_SCRIPT)
	StepExtern = -4 // the allocation held on every node
)

// StepName is how a step ID prints after the job ID and a dot.
func StepName(id int) string {
	switch id {
	case StepBatch:
		return "batch"
	case StepExtern:
		return "extern"
	}
	return fmt.Sprint(id)
}

// StepRequest is srun's ask (POST /v1/jobs/{id}/steps). Zero values mean
// "not given"; ctld derives the rest from the allocation as srun does.
type StepRequest struct {
	Name          string   `json:"name"`                      // --job-name, default argv[0]
	Nodes         int      `json:"nodes,omitempty"`           // -N (with NodesMin, the most)
	NodesMin      int      `json:"nodes_min,omitempty"`       // -N MIN-MAX's MIN: as many nodes as there are up to Nodes, as Slurm's, no fewer
	Ntasks        int      `json:"ntasks,omitempty"`          // -n
	NtasksPerNode int      `json:"ntasks_per_node,omitempty"` // --ntasks-per-node
	CPUsPerTask   int      `json:"cpus_per_task,omitempty"`   // -c
	MemBytes      int64    `json:"mem_bytes,omitempty"`       // --mem, per node
	GPUsPerTask   int      `json:"gpus_per_task,omitempty"`   // --gpus-per-task
	NodeList      []string `json:"node_list,omitempty"`       // -w, expanded
	Exclude       []string `json:"exclude,omitempty"`         // -x, expanded
	Relative      *int     `json:"relative,omitempty"`        // -r
	Overlap       bool     `json:"overlap,omitempty"`         // --overlap
	Exact         bool     `json:"exact,omitempty"`           // --exact / --exclusive
	Distribution  string   `json:"distribution,omitempty"`    // -m: "block" (default) or "cyclic"
}

// StepNode is one node of a step: where it is and which tasks (global
// ranks, SLURM_PROCID) run there.
type StepNode struct {
	Node  string `json:"node"`
	Addr  string `json:"addr"`  // the node plane's base URL
	Ranks []int  `json:"ranks"` // ascending
	CPUs  int    `json:"cpus"`  // CPUs of the step on this node
}

// Step is a step's record, as ctld keeps it and accounting shows it.
type Step struct {
	JobID        uint64     `json:"job_id"`
	StepID       int        `json:"step_id"`
	Name         string     `json:"name"`
	State        JobState   `json:"state"`
	Nodes        []string   `json:"nodes"`
	Tasks        int        `json:"tasks"`
	TasksPerNode []int      `json:"tasks_per_node"` // aligned with Nodes
	CPUsPerTask  int        `json:"cpus_per_task"`
	Start        time.Time  `json:"start"`
	End          *time.Time `json:"end,omitempty"`
	ExitCode     int        `json:"exit_code"`
	Signal       int        `json:"signal,omitempty"`
	CPUTimeUsec  int64      `json:"cpu_time_usec,omitempty"`
	PeakMemBytes int64      `json:"peak_mem_bytes,omitempty"`
	// CancelledBy is the uid that cancelled the step (scancel JOB.STEP);
	// nil when no one did.
	CancelledBy *uint32 `json:"cancelled_by,omitempty"`
}

// StepGrant is ctld's answer to a StepRequest.
type StepGrant struct {
	Step       Step           `json:"step"`
	Layout     []StepNode     `json:"layout"` // in node order; Layout[0] is the step's first node
	Credential StepCredential `json:"credential"`
	// CAPEM is the cluster CA's certificate, for TLS to the nodes; empty
	// when the node plane is plaintext.
	CAPEM string `json:"ca_pem,omitempty"`
	// MPIDefault is the cluster's MpiDefault (corral.conf): the PMI srun
	// serves a step that gives no --mpi; "" is none.
	MPIDefault string `json:"mpi_default,omitempty"`
}

// StepCredential is ctld's signed permission to run one step's tasks as
// one user on the listed nodes, until Expires. Nodes verify Sig with the
// cluster key.
type StepCredential struct {
	JobID   uint64     `json:"job_id"`
	StepID  int        `json:"step_id"`
	UID     uint32     `json:"uid"`
	GID     uint32     `json:"gid"`
	Layout  []StepNode `json:"layout"`
	Tasks   int        `json:"tasks"` // the step's task count (SLURM_NTASKS)
	Expires time.Time  `json:"expires"`
	Sig     string     `json:"sig"`
}

// ErrBadCredential is a step credential that is not ctld's, not for this
// node, or expired.
var ErrBadCredential = errors.New("invalid step credential")

// SignCredential fills in c.Sig.
func SignCredential(c *StepCredential, key []byte) {
	c.Sig = stepCredentialMAC(c, key)
}

// VerifyCredential checks c's signature and expiry at now, and that it
// names node; it returns the node's entry of the layout.
func VerifyCredential(c *StepCredential, key []byte, node string, now time.Time) (StepNode, error) {
	want := stepCredentialMAC(c, key)
	if !hmac.Equal([]byte(want), []byte(c.Sig)) {
		return StepNode{}, fmt.Errorf("%w: bad signature", ErrBadCredential)
	}
	if !now.Before(c.Expires) {
		return StepNode{}, fmt.Errorf("%w: expired", ErrBadCredential)
	}
	for _, n := range c.Layout {
		if n.Node == node {
			return n, nil
		}
	}
	return StepNode{}, fmt.Errorf("%w: not for node %s", ErrBadCredential, node)
}

func stepCredentialMAC(c *StepCredential, key []byte) string {
	unsigned := *c
	unsigned.Sig = ""
	body, _ := json.Marshal(unsigned) // plain data: cannot fail
	m := hmac.New(sha256.New, key)
	m.Write([]byte("corral step credential\x00"))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// StepLaunch is srun's request to a node (POST /v1/steps, node plane).
type StepLaunch struct {
	Credential StepCredential `json:"credential"`
	Argv       []string       `json:"argv"`
	Env        []string       `json:"env"` // srun's environment; noded adds the task variables
	Cwd        string         `json:"cwd"`
	// IOAddr is srun's listening address (host:port); the runner connects
	// there and presents IOToken first (package stepio).
	IOAddr  string `json:"io_addr"`
	IOToken string `json:"io_token"`
	Pty     bool   `json:"pty,omitempty"` // task 0 on a pseudo-terminal
	// MasterPort is MASTER_PORT for frameworks (one free port per step,
	// picked by srun on the step's first node's behalf).
	MasterPort int `json:"master_port,omitempty"`
	// MPI is the PMI the runners serve the tasks (srun --mpi): MPIPMI2,
	// or "" for none. Runners that serve it relay its fences through srun
	// (package stepio's PMI frames).
	MPI string `json:"mpi,omitempty"`
}

// MPIPMI2 is srun --mpi=pmi2: the step's runners serve the simple PMI
// wire protocol, versions 1 and 2, to the tasks over PMI_FD (package pmi).
const MPIPMI2 = "pmi2"

// EventStepEnded reports that a step's tasks on a node have ended
// (JobEvent.StepID says which; ExitCode/Signal are the highest of the
// node's tasks).
const EventStepEnded JobEventKind = "step_ended"

// TaskStats are one task's live figures on its node (sstat), summed over
// the task's processes: memory now and at its peak, CPU time, major page
// faults.
type TaskStats struct {
	Rank           int    `json:"rank"`
	Node           string `json:"node,omitempty"` // set by ctld
	RSSBytes       int64  `json:"rss_bytes"`
	MaxRSSBytes    int64  `json:"max_rss_bytes"`
	VMSizeBytes    int64  `json:"vm_size_bytes"`
	MaxVMSizeBytes int64  `json:"max_vm_size_bytes"`
	CPUUsec        int64  `json:"cpu_usec"`
	Pages          int64  `json:"pages"`
	PIDs           []int  `json:"pids,omitempty"`
}

// StepStats is GET /v1/jobs/{id}/steps/{step}/stats: a running step's
// tasks' live figures, from every node of the step (Nodes, in the step's
// node order); a node that did not answer is in Missing.
type StepStats struct {
	JobID   uint64      `json:"job_id"`
	StepID  int         `json:"step_id"`
	Nodes   []string    `json:"nodes"`
	Tasks   []TaskStats `json:"tasks"`
	Missing []string    `json:"missing,omitempty"`
}

// StepStatsRequest asks a node for a step's live figures (POST
// /v1/steps/stats, node plane: a body, so the signature covers which
// step).
type StepStatsRequest struct {
	JobID  uint64 `json:"job_id"`
	StepID int    `json:"step_id"`
}
