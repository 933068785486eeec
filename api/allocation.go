package api

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// Allocations: jobs whose work is started by a client on the submit host
// (salloc's command, srun outside an allocation) rather than by a batch
// script (JobSpec.Allocation). The client keeps the allocation alive by
// renewing it (POST /v1/jobs/{id}/allocation) at least every
// Allocation.Renew; an allocation not renewed for the controller's
// inactivity bound is cancelled, so losing the client (kill -9, a lost
// host) releases it. Releasing it ends the job as its command ended:
// COMPLETED for exit code 0, else FAILED, as Slurm's accounting shows
// salloc jobs.

// AllocationRequest renews an allocation, or releases it with its
// command's exit status.
type AllocationRequest struct {
	Release  bool `json:"release,omitempty"`
	ExitCode int  `json:"exit_code,omitempty"` // with Release: the command's exit status
	// WaitReadyMs, without Release, holds the answer up to this many
	// milliseconds until the allocation is ready or has ended, so that a
	// client waiting for its grant learns it at once instead of at its
	// next poll. The controller bounds it (MaxAllocationWait).
	WaitReadyMs int `json:"wait_ready_ms,omitempty"`
}

// MaxAllocationWait bounds AllocationRequest.WaitReadyMs: well inside the
// shortest renewal interval, so a waiting client renews as often as ever.
const MaxAllocationWait = time.Second

// Allocation is where an allocation stands, the answer to an
// AllocationRequest.
type Allocation struct {
	JobID  uint64   `json:"job_id"`
	State  JobState `json:"state"`
	Reason Reason   `json:"reason,omitempty"`
	// Ready: RUNNING and every node answered its launch, so steps may
	// start.
	Ready bool     `json:"ready"`
	Nodes []string `json:"nodes,omitempty"`
	// CPUs per node, as the job holds them.
	CPUs int `json:"cpus,omitempty"`
	// Partition and ClusterName are the job's, for its command's
	// SLURM_JOB_PARTITION and SLURM_CLUSTER_NAME.
	Partition   string `json:"partition,omitempty"`
	ClusterName string `json:"cluster_name,omitempty"`
	// Renew is how often the client must renew, in seconds.
	Renew   int    `json:"renew_s"`
	Message string `json:"message,omitempty"`
}

// RenewEvery is a.Renew as a duration, at least a tenth of a second.
func (a *Allocation) RenewEvery() time.Duration {
	return max(time.Duration(a.Renew)*time.Second, 100*time.Millisecond)
}

// Allocation renews allocation job id, or releases it.
func (c *Client) Allocation(ctx context.Context, id uint64, req AllocationRequest) (*Allocation, error) {
	var out Allocation
	if err := c.Do(ctx, http.MethodPost, fmt.Sprintf("/v1/jobs/%d/allocation", id), req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
