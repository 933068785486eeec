package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// Limits are a resource policy's maxima; 0 means no limit. The "in use"
// limits count the owner's RUNNING jobs; the per-job ones and MaxPending
// are checked at submit.
type Limits struct {
	MaxRunningJobs int   `json:"max_running_jobs,omitempty"`
	MaxPendingJobs int   `json:"max_pending_jobs,omitempty"`
	MaxCPUs        int   `json:"max_cpus,omitempty"`
	MaxMemBytes    int64 `json:"max_mem_bytes,omitempty"`
	MaxFGPU        int   `json:"max_fgpu_hundredths,omitempty"`
	MaxCPUsPerJob  int   `json:"max_cpus_per_job,omitempty"`
	MaxMemPerJob   int64 `json:"max_mem_per_job,omitempty"`
	MaxFGPUPerJob  int   `json:"max_fgpu_per_job_hundredths,omitempty"`
}

// Policy kinds.
const (
	PolicyUser    = "user"
	PolicyAccount = "account"
)

// Policy is the limits of one user or one account (corral policy).
type Policy struct {
	Kind   string `json:"kind"` // PolicyUser or PolicyAccount
	Name   string `json:"name"`
	Limits Limits `json:"limits"`
}

// Reasons of jobs held back by a policy's running limits.
const (
	ReasonPolicyMaxRunningJobs Reason = "PolicyMaxRunningJobs"
	ReasonPolicyMaxCPUs        Reason = "PolicyMaxCPUs"
	ReasonPolicyMaxMem         Reason = "PolicyMaxMemory"
	ReasonPolicyMaxFGPU        Reason = "PolicyMaxFGPU"
)

// UsageAmounts are CPUs, memory and fGPU (hundredths).
type UsageAmounts struct {
	CPUs     int   `json:"cpus"`
	MemBytes int64 `json:"mem_bytes"`
	FGPU     int   `json:"fgpu_hundredths"`
}

// PartitionUsage is one partition's allocated and total resources.
type PartitionUsage struct {
	Partition string       `json:"partition"`
	Allocated UsageAmounts `json:"allocated"`
	Total     UsageAmounts `json:"total"`
}

// UserUsage is what one user holds and what their policy allows (a zero
// field of Allowed means no limit).
type UserUsage struct {
	User        string       `json:"user"`
	Allocated   UsageAmounts `json:"allocated"`
	Allowed     UsageAmounts `json:"allowed"`
	RunningJobs int          `json:"running_jobs"`
	PendingJobs int          `json:"pending_jobs"`
}

// Usage is GET /v1/usage.
type Usage struct {
	Partitions []PartitionUsage `json:"partitions"`
	Users      []UserUsage      `json:"users"`
}

// LogChunk is GET /v1/jobs/{id}/log: a piece of the job's output and
// whether the job may still write more.
type LogChunk struct {
	OutputChunk
	Node  string   `json:"node"`
	State JobState `json:"state"`
	Done  bool     `json:"done"` // the job ended: nothing more will come
}

// ---- user-plane client calls ----

// Images lists the images on every node (Image.Nodes says which).
func (c *Client) Images(ctx context.Context) ([]Image, error) {
	var out []Image
	err := c.Do(ctx, http.MethodGet, "/v1/images", nil, &out)
	return out, err
}

// ImageResult is one node's answer to an ImageRequest.
type ImageResult struct {
	Node  string `json:"node"`
	Image *Image `json:"image,omitempty"`
	Error string `json:"error,omitempty"`
}

// ImageOp pulls, imports or removes an image on nodes (admins only).
func (c *Client) ImageOp(ctx context.Context, req ImageRequest) ([]ImageResult, error) {
	var out []ImageResult
	err := c.Do(ctx, http.MethodPost, "/v1/images", req, &out)
	return out, err
}

// Log reads a job's stdout (or stderr) from offset.
func (c *Client) Log(ctx context.Context, id uint64, stderr bool, offset int64) (*LogChunk, error) {
	q := url.Values{"offset": {strconv.FormatInt(offset, 10)}}
	if stderr {
		q.Set("err", "1")
	}
	var out LogChunk
	if err := c.Do(ctx, http.MethodGet, "/v1/jobs/"+strconv.FormatUint(id, 10)+"/log?"+q.Encode(), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Policies lists every resource policy.
func (c *Client) Policies(ctx context.Context) ([]Policy, error) {
	var out []Policy
	err := c.Do(ctx, http.MethodGet, "/v1/policies", nil, &out)
	return out, err
}

// SetPolicy creates or replaces a policy; all-zero Limits remove it.
func (c *Client) SetPolicy(ctx context.Context, p Policy) error {
	return c.Do(ctx, http.MethodPost, "/v1/policies", p, nil)
}

// UsageFor returns the partitions' usage and the caller's (user "" ),
// another user's or, with all, everyone's.
func (c *Client) UsageFor(ctx context.Context, user string, all bool) (*Usage, error) {
	q := url.Values{}
	if user != "" {
		q.Set("user", user)
	}
	if all {
		q.Set("all", "1")
	}
	var out Usage
	if err := c.Do(ctx, http.MethodGet, "/v1/usage?"+q.Encode(), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
