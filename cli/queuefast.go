package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/api"
)

// The plain `corral queue` (no --array, no --start) is the command users
// and scripts run most, on the biggest listings: with 100,000 jobs the
// answer is some 65 MB of JSON. --json streams it through, re-indented
// (decoding and encoding it again took seconds, and memory for all of it
// twice), and the table asks for the brief view (view=brief: only its
// columns, about a fifth of the bytes). docs/benchmarks.md, Load.

// queuePlain prints the listing for f as JSON or as the table.
func queuePlain(c *ucli.Context, f api.JobFilter) error {
	ctx, cancel := requestContext(c)
	defer cancel()
	if c.Bool("json") {
		// Streamed through: ctld lists in ID order, as the table does.
		resp, err := openGET(ctx, client(c, "").Socket, jobsPath(f, "summary")) // admin.go; no spec or history
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body := bufio.NewReaderSize(resp.Body, 256<<10)
		if head, _ := body.Peek(4); string(head) == "null" { // no jobs, from an older controller
			_, err := io.WriteString(out(c), "[]\n")
			return err
		}
		return indentJSON(out(c), body) // jsonstream.go
	}
	view := "brief" // only the table's columns (ctld/listing.go)
	raw, err := jobsRaw(ctx, client(c, ""), f, view)
	var se *api.StatusError
	if view != "" && errors.As(err, &se) && se.Code == http.StatusBadRequest && strings.Contains(se.Message, "view") {
		view = ""
		raw, err = jobsRaw(ctx, client(c, ""), f, view) // a controller from before view=brief
	}
	if err != nil {
		return err
	}
	var listed []queueJob
	if err := json.Unmarshal(raw, &listed); err != nil {
		return err
	}
	sort.Slice(listed, func(a, b int) bool { return listed[a].ID < listed[b].ID })
	now := time.Now()
	rows := make([][]string, len(listed))
	fgpu := make([]string, len(listed))
	hasGPUs := false
	var j api.Job // reused: an api.Job is a kilobyte, 100,000 of them a tenth of a gigabyte
	for i := range listed {
		listed[i].fill(&j)
		rows[i] = queueRow(&j, now)
		fgpu[i] = jobFGPUText(&j)
		hasGPUs = hasGPUs || jobHasGPUs(&j)
	}
	header := []string{"JOBID", "PARTITION", "NAME", "USER", "ST", "TIME", "NODES", "NODELIST(REASON)"}
	if hasGPUs { // as withFGPUColumn (gpuview.go) adds it
		at := slices.Index(header, "NODES")
		header = slices.Insert(header, at, "FGPU")
		for i := range rows {
			rows[i] = slices.Insert(rows[i], at, fgpu[i])
		}
	}
	return writeTable(out(c), header, rows)
}

// jobsRaw is api.Client.Jobs without the decoding.
func jobsRaw(ctx context.Context, cl *api.Client, f api.JobFilter, view string) (json.RawMessage, error) {
	var raw json.RawMessage
	err := cl.Do(ctx, http.MethodGet, jobsPath(f, view), nil, &raw)
	return raw, err
}

// jobsPath is GET /v1/jobs with f (as api.Client.Jobs sends it) and view.
func jobsPath(f api.JobFilter, view string) string {
	q := url.Values{}
	if view != "" {
		q.Set("view", view)
	}
	for _, u := range f.Users {
		q.Add("user", u)
	}
	for _, s := range f.States {
		q.Add("state", string(s))
	}
	for _, id := range f.IDs {
		q.Add("id", strconv.FormatUint(id, 10))
	}
	for _, t := range f.Tasks {
		q.Add("id", t.String())
	}
	if f.All {
		q.Set("all", "1")
	}
	path := "/v1/jobs"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return path
}

// queueJob is what the table shows of a job, under api.Job's JSON names:
// ctld's brief view (view=brief) sends exactly these, and from a full
// listing (an older controller) the decoder skips the rest.
type queueJob struct {
	ID             uint64         `json:"id"`
	Name           string         `json:"name"`
	User           string         `json:"user"`
	Partition      string         `json:"partition"`
	State          api.JobState   `json:"state"`
	Reason         api.Reason     `json:"reason"`
	NodeCount      int            `json:"node_count"`
	StartTime      *time.Time     `json:"start_time"`
	EndTime        *time.Time     `json:"end_time"`
	Nodes          []string       `json:"nodes"`
	FGPUHundredths int            `json:"fgpu_hundredths"`
	GPUs           int            `json:"gpus"`
	GPUType        string         `json:"gpu_type"`
	GPUAlloc       []api.NodeGPUs `json:"gpu_alloc"`
	ArrayJobID     uint64         `json:"array_job_id"`
	ArrayTaskID    *int           `json:"array_task_id"`
	ArrayTasks     string         `json:"array_tasks"`
}

// fill makes j the api.Job that q stands for.
func (q *queueJob) fill(j *api.Job) {
	*j = api.Job{ID: q.ID, Name: q.Name, User: q.User, Partition: q.Partition, State: q.State, Reason: q.Reason,
		NodeCount: q.NodeCount, StartTime: q.StartTime, EndTime: q.EndTime, Nodes: q.Nodes,
		FGPUHundredths: q.FGPUHundredths, GPUs: q.GPUs, GPUType: q.GPUType, GPUAlloc: q.GPUAlloc,
		ArrayJobID: q.ArrayJobID, ArrayTaskID: q.ArrayTaskID, ArrayTasks: q.ArrayTasks}
}
