//go:build !slurmonly

package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"sort"
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
		resp, err := openGET(ctx, client(c, "").Socket, api.JobsPath(f, "summary")) // admin.go; no spec or history
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
	var listed []api.JobBrief
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
		j = listed[i].Job()
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
