package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// This file holds the wire types and client calls of job pipelines: array
// tasks, hold and release, requeue, update, waiting for an end, test-only
// submits and accounting history.

// JobRun is one earlier run of a requeued job, as accounting shows it.
type JobRun struct {
	// State is how the run ended: REQUEUED when it was requeued while
	// running, NODE_FAIL when its node was lost, else the state it had
	// finished in before a requeue.
	State        JobState  `json:"state"`
	StartTime    time.Time `json:"start_time"`
	EndTime      time.Time `json:"end_time"`
	ExitCode     *int      `json:"exit_code"`
	Signal       int       `json:"signal,omitempty"`
	Nodes        []string  `json:"nodes"`
	PeakMemBytes int64     `json:"peak_mem_bytes,omitempty"`
	CPUTimeUsec  int64     `json:"cpu_time_usec,omitempty"`
	Message      string    `json:"message,omitempty"`
	// GPUs is the physical GPUs the run held on all its nodes (0.5 is
	// half of one), for accounting.
	GPUs float64 `json:"gpus,omitempty"`
	// GPUAlloc is the run's shares of its nodes' devices (Job.GPUAlloc
	// then): a part of the run still stopping after a controller restart
	// holds them again (docs/steps.md).
	GPUAlloc []NodeGPUs `json:"gpu_alloc,omitempty"`
}

// TaskRef names one task of an array job: 123_4 is {JobID: 123, Task: 4}.
type TaskRef struct {
	JobID uint64 `json:"job_id"`
	Task  int    `json:"task"`
}

func (t TaskRef) String() string { return strconv.FormatUint(t.JobID, 10) + "_" + strconv.Itoa(t.Task) }

// ParseJobRef reads a job as users write it: "123" (a job, or every task
// of array job 123) or "123_4" (task 4 of array job 123). task is nil for
// the former.
func ParseJobRef(s string) (id uint64, task *int, err error) {
	idText, taskText, hasTask := strings.Cut(s, "_")
	id, err = strconv.ParseUint(idText, 10, 64)
	if err != nil || id == 0 || idText[0] == '+' {
		if hasTask {
			return 0, nil, fmt.Errorf("invalid job id %q: use 123_4 for task 4 of array job 123", s)
		}
		return 0, nil, fmt.Errorf("invalid job id %q: use a positive number", s)
	}
	if !hasTask {
		return id, nil, nil
	}
	n, err := strconv.Atoi(taskText)
	if err != nil || n < 0 || taskText[0] == '+' {
		return 0, nil, fmt.Errorf("invalid array task in %q: use 123_4 for task 4 of array job 123", s)
	}
	return id, &n, nil
}

// JobRefText is how a job is named in listings: 123, 123_4 for an array
// task, 123_[4-15%2] for an array's tasks that have not started.
func JobRefText(j *Job) string {
	switch {
	case j.ArrayTasks != "":
		return strconv.FormatUint(j.ArrayJobID, 10) + "_[" + j.ArrayTasks + "]"
	case j.ArrayTaskID != nil:
		return TaskRef{JobID: j.ArrayJobID, Task: *j.ArrayTaskID}.String()
	}
	return strconv.FormatUint(j.ID, 10)
}

// JobsRequest names jobs for POST /v1/jobs/hold, /release and /requeue.
// An ID that is an array job names every task of it.
type JobsRequest struct {
	IDs   []uint64  `json:"ids,omitempty"`
	Tasks []TaskRef `json:"tasks,omitempty"`
}

// JobsResponse says, per job as the request named it ("123", "123_4"),
// what was done and what was refused and why: the first MaxListedErrors
// refusals, and ErrorCount counts them all.
type JobsResponse struct {
	Done       []string          `json:"done"`
	Errors     map[string]string `json:"errors,omitempty"`
	ErrorCount int               `json:"error_count,omitempty"`
}

// UpdateRequest is POST /v1/jobs/update: change a pending or running
// job (every task of an array job). Nil fields stay as they are. Users may
// only update their own jobs, only lower a time limit and only raise nice.
type UpdateRequest struct {
	ID        uint64  `json:"id"`
	Task      *int    `json:"task,omitempty"`
	TimeLimit *int64  `json:"time_limit_s,omitempty"`
	Nice      *int    `json:"nice,omitempty"`
	Name      *string `json:"name,omitempty"`
	Comment   *string `json:"comment,omitempty"`
	// ArrayTaskThrottle is an array job's %N: how many of its tasks may
	// run at once (0: no limit). Only for an array job's own ID.
	ArrayTaskThrottle *int `json:"array_task_throttle,omitempty"`
	// The fields below change a job that waits (PENDING), which is
	// admitted again with them as a submit is (partition, fit, account,
	// policies): an update never leaves a job that a submit would refuse.
	Partition  *string    `json:"partition,omitempty"`
	Dependency *string    `json:"dependency,omitempty"` // as sbatch -d takes it; "" removes it
	Begin      *time.Time `json:"begin,omitempty"`      // scontrol's StartTime; the zero time removes it
	Account    *string    `json:"account,omitempty"`
	QOS        *string    `json:"qos,omitempty"`
	Constraint *string    `json:"constraint,omitempty"`        // scontrol's Features
	NodeList   *[]string  `json:"nodelist,omitempty"`          // ReqNodeList; empty removes it
	Exclude    *[]string  `json:"exclude,omitempty"`           // ExcNodeList
	MemBytes   *int64     `json:"mem_bytes,omitempty"`         // MinMemoryNode: per node
	MemPerCPU  *int64     `json:"mem_per_cpu_bytes,omitempty"` // MinMemoryCPU
	Requeue    *bool      `json:"requeue,omitempty"`
}

// ChangesSpec reports whether req changes what only a waiting job may
// change.
func (req *UpdateRequest) ChangesSpec() bool {
	return req.Partition != nil || req.Dependency != nil || req.Begin != nil || req.Account != nil || req.QOS != nil ||
		req.Constraint != nil || req.NodeList != nil || req.Exclude != nil || req.MemBytes != nil || req.MemPerCPU != nil ||
		req.Requeue != nil
}

// WaitResponse answers GET /v1/jobs/{id}/wait.
type WaitResponse struct {
	// Done: the job has ended (for an array job: every task).
	Done bool `json:"done"`
	// State is the job's state; once an array job is done, the state of
	// the task that gave ExitStatus.
	State JobState `json:"state"`
	// ExitStatus is what `corral submit --wait` exits with once Done: the
	// job's exit code, 1 when it ended without one or by a signal; for an
	// array job the highest over its tasks.
	ExitStatus int `json:"exit_status"`
}

// TestSubmitResponse answers POST /v1/jobs/test: the job as it would be
// stored (ID 0; an array job as the entry for its tasks) and when the
// planner would start it.
type TestSubmitResponse struct {
	Job Job `json:"job"`
	// Start is the planned start (now when it would start at once); nil
	// when the planner cannot say.
	Start  *time.Time `json:"start,omitempty"`
	Nodes  []string   `json:"nodes,omitempty"`
	Reason Reason     `json:"reason,omitempty"` // why it would wait
	// JobID is the ID a submit would have been given instead (the next
	// one, unless another submit takes it first), which sbatch
	// --test-only prints as Slurm's does.
	JobID uint64 `json:"job_id,omitempty"`
}

// AcctRecord is one finished run in the accounting history (GET /v1/acct).
type AcctRecord struct {
	JobID       uint64 `json:"job_id"`
	ArrayJobID  uint64 `json:"array_job_id,omitempty"`
	ArrayTaskID *int   `json:"array_task_id,omitempty"`
	// ArrayTasks is set for tasks of an array that never started (cancelled
	// before they ran), folded into one record.
	ArrayTasks string `json:"array_tasks,omitempty"`
	// Run is 0 for a job's first run and n for its run after n requeues.
	Run       int      `json:"run"`
	Name      string   `json:"name"`
	Partition string   `json:"partition"`
	Account   string   `json:"account,omitempty"`
	User      string   `json:"user"`
	UID       uint32   `json:"uid"`
	State     JobState `json:"state"`
	ExitCode  int      `json:"exit_code"`
	Signal    int      `json:"signal,omitempty"`

	SubmitTime time.Time  `json:"submit_time"`
	StartTime  *time.Time `json:"start_time"`
	EndTime    time.Time  `json:"end_time"`
	ElapsedS   int64      `json:"elapsed_s"`
	CPUs       int        `json:"cpus"` // per node
	NodeCount  int        `json:"node_count"`
	// CPUTimeS is sacct's CPUTime: elapsed time x allocated CPUs.
	CPUTimeS int64 `json:"cpu_time_s"`
	// TotalCPUUsec is the CPU time the job's processes used (sacct's TotalCPU).
	TotalCPUUsec int64 `json:"total_cpu_usec"`
	MaxRSSBytes  int64 `json:"max_rss_bytes"`
	// GPUTimeS is elapsed time x the physical GPUs the run held (half of
	// one counts 0.5).
	GPUTimeS int64    `json:"gpu_time_s,omitempty"`
	Nodes    []string `json:"nodes"`
	Message  string   `json:"message,omitempty"`
	// CancelledBy is the uid whose cancel ended the run, nil for none.
	CancelledBy *uint32 `json:"cancelled_by,omitempty"`
	// Steps are the job's steps, ended ones included, on the record of
	// its latest run: its batch and extern parts (JOB.batch, JOB.extern),
	// then srun's (JOB.0, JOB.1, ...).
	Steps []Step `json:"steps,omitempty"`
}

// AcctFilter selects accounting records (query: user, id, state, start,
// end). Users see only their own jobs; root sees everyone's.
type AcctFilter struct {
	Users  []string
	IDs    []uint64
	Tasks  []TaskRef
	States []JobState // REQUEUED selects requeued runs
	// Start and End bound the window: a record is listed when the job ran
	// (or waited) at some moment in it. Zero means unbounded.
	Start, End time.Time
	// Names selects jobs by name (sacct --name).
	Names []string
	// Limit, when more than 0, lists only the newest Limit jobs' records
	// (by job ID) among those matching; Before, when set, only jobs with
	// a lower ID: a page of the history, and the next page's Before is
	// the lowest ID listed.
	Limit  int
	Before uint64
}

// JobRef fetches one job as users name it ("123" or "123_4").
func (c *Client) JobRef(ctx context.Context, ref string) (*Job, error) {
	var j Job
	if err := c.Do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(ref), nil, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// Control holds, releases, requeues, suspends or resumes jobs: action is
// "hold", "release", "requeue", "suspend" or "resume".
// At most MaxRefsPerRequest jobs go in one request (batch.go).
func (c *Client) Control(ctx context.Context, action string, req JobsRequest) (*JobsResponse, error) {
	resp := JobsResponse{Done: []string{}}
	for _, b := range refBatches(req.IDs, req.Tasks) {
		var part JobsResponse
		if err := c.Do(ctx, http.MethodPost, "/v1/jobs/"+action, b, &part); err != nil {
			return nil, err
		}
		resp.add(&part)
	}
	return &resp, nil
}

// Update changes a job's time limit, nice or name.
func (c *Client) Update(ctx context.Context, req UpdateRequest) (*JobsResponse, error) {
	var resp JobsResponse
	if err := c.Do(ctx, http.MethodPost, "/v1/jobs/update", req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// Wait asks whether a job ("123" or "123_4") has ended, waiting up to
// timeout (a long poll; the controller caps it) for it to end.
func (c *Client) Wait(ctx context.Context, ref string, timeout time.Duration) (*WaitResponse, error) {
	var resp WaitResponse
	path := "/v1/jobs/" + url.PathEscape(ref) + "/wait?timeout_s=" + strconv.FormatInt(int64(timeout/time.Second), 10)
	if err := c.Do(ctx, http.MethodGet, path, nil, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// TestSubmit validates a submit against the running cluster and returns
// the job as it would be stored with its planned start; nothing is stored.
func (c *Client) TestSubmit(ctx context.Context, req SubmitRequest) (*TestSubmitResponse, error) {
	var resp TestSubmitResponse
	if err := c.Do(ctx, http.MethodPost, "/v1/jobs/test", req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// Acct lists finished runs matching f, oldest job first.
func (c *Client) Acct(ctx context.Context, f AcctFilter) ([]AcctRecord, error) {
	q := url.Values{}
	for _, u := range f.Users {
		q.Add("user", u)
	}
	for _, id := range f.IDs {
		q.Add("id", strconv.FormatUint(id, 10))
	}
	for _, t := range f.Tasks {
		q.Add("id", t.String())
	}
	for _, s := range f.States {
		q.Add("state", string(s))
	}
	if !f.Start.IsZero() {
		q.Set("start", f.Start.Format(time.RFC3339))
	}
	if !f.End.IsZero() {
		q.Set("end", f.End.Format(time.RFC3339))
	}
	for _, n := range f.Names {
		q.Add("name", n)
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	if f.Before > 0 {
		q.Set("before", strconv.FormatUint(f.Before, 10))
	}
	path := "/v1/acct"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var recs []AcctRecord
	err := c.Do(ctx, http.MethodGet, path, nil, &recs)
	return recs, err
}
