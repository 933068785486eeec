package ctld

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

// acctEndpoint serves /v1/acct, the accounting history.
type acctEndpoint struct{ srv *Server }

// acctParams are GET /v1/acct's query parameters.
var acctParams = []string{"user", "id", "state", "start", "end", "name", "limit", "before"}

// history serves GET /v1/acct?user=&id=&state=&start=&end=&name= (values
// of one parameter ORed, parameters ANDed), and a page of it with
// &limit=&before=. Users see their own jobs only.
func (e acctEndpoint) history(w http.ResponseWriter, r *http.Request, caller peer) {
	var f api.AcctFilter
	for key, vals := range r.URL.Query() {
		if !slices.Contains(acctParams, key) {
			writeError(w, fault.Errorf(fault.Invalid, "unknown query parameter %q (valid: %s)", key, strings.Join(acctParams, ", ")))
			return
		}
		if (key == "limit" || key == "before") && len(vals) > 1 {
			writeError(w, fault.Errorf(fault.Invalid, "%s is given %d times; give it once", key, len(vals)))
			return
		}
		for _, v := range splitList(vals) {
			if err := addAcctFilter(&f, key, v); err != nil {
				writeError(w, err)
				return
			}
		}
	}
	h, err := e.srv.history(caller, f)
	if err != nil {
		writeError(w, err)
		return
	}
	writeAcct(w, h)
}

func addAcctFilter(f *api.AcctFilter, key, v string) error {
	switch key {
	case "user":
		f.Users = append(f.Users, v)
	case "id":
		id, task, err := api.ParseJobRef(v)
		if err != nil {
			return fault.Errorf(fault.Invalid, "%v", err)
		}
		if task != nil {
			f.Tasks = append(f.Tasks, api.TaskRef{JobID: id, Task: *task})
		} else {
			f.IDs = append(f.IDs, id)
		}
	case "state":
		st, err := parseAcctState(v)
		if err != nil {
			return fault.Errorf(fault.Invalid, "%v", err)
		}
		f.States = append(f.States, st)
	case "name":
		f.Names = append(f.Names, v)
	case "limit", "before":
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n == 0 || key == "limit" && n > maxAcctLimit {
			return fault.Errorf(fault.Invalid, "invalid %s=%q: give a number from 1%s", key, v, map[bool]string{true: fmt.Sprintf(" to %d", maxAcctLimit), false: ""}[key == "limit"])
		}
		if key == "limit" {
			f.Limit = int(n)
		} else {
			f.Before = n
		}
	case "start", "end":
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return fault.Errorf(fault.Invalid, "invalid %s=%q: use an RFC 3339 time such as 2026-01-20T12:34:00Z", key, v)
		}
		if key == "start" {
			f.Start = t
		} else {
			f.End = t
		}
	}
	return nil
}

// parseAcctState is api.ParseJobState plus REQUEUED (RQ), the state of a
// requeued run.
func parseAcctState(s string) (api.JobState, error) {
	if strings.EqualFold(s, string(api.StateRequeued)) || strings.EqualFold(s, api.StateRequeued.Short()) {
		return api.StateRequeued, nil
	}
	st, err := api.ParseJobState(s)
	if err != nil {
		return "", err
	}
	return st, nil
}

// writeAcct sends h's records as a JSON array, by job ID then run, the
// bytes json.Marshal of the whole list would give, a chunk at a time.
func writeAcct(w http.ResponseWriter, h *acctHistory) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.WriteByte('[')
	first := true
	for !h.done() {
		recs := h.next()
		for i := range recs {
			b, err := json.Marshal(&recs[i])
			if err != nil {
				return // an api value always encodes
			}
			if !first {
				bw.WriteByte(',')
			}
			first = false
			if _, err := bw.Write(b); err != nil {
				return // the client is gone
			}
		}
	}
	bw.WriteString("]\n")
	bw.Flush()
}
