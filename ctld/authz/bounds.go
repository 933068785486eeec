package authz

import (
	"net/http"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

// What one user-plane request may cost. A request's size times the work
// per item times the answer per item must stay bounded: a cancel naming
// 499,999 IDs once took the controller from 15 to 180 MB for an 18 MB
// answer. Every route declares its bound here, beside its rule in
// UserRoutes (ctld's TestEveryRouteHasABound), and docs/api.md lists them.

// Bound is the most one request to a route may carry.
type Bound struct {
	Body  int64 // request body bytes read; 0: the route reads none
	Query int   // query values (each comma-separated one counts); 0: none read
	// Refs is the most job IDs and tasks a body may name (api.MaxRefsPerRequest);
	// 0: the body names none or one. The handler enforces it.
	Refs int
	// Answer says what bounds the answer and the work, for docs/api.md.
	Answer string
}

// Body limits. A job (script, environment) is the only big body; lists
// of job IDs and node names fit in a mebibyte at any allowed length.
const (
	// MaxUserBody is the most any user-plane body may be: a job's script
	// and environment.
	MaxUserBody   = 4 << 20
	maxSubmitBody = MaxUserBody
	maxSmallBody  = 1 << 20
)

// maxQueryValues bounds the values of one listing query (id=, user=,
// state=): as many as a list in a body (api.MaxListEntries).
const maxQueryValues = api.MaxListEntries

const (
	answerOne      = "one record"
	answerRefs     = "per-ref results for at most 10,000 refs; errors listed for the first 100, all counted"
	answerStreamed = "streamed a chunk at a time; grows with the jobs the caller may see, not with the request"
	answerCluster  = "grows with the cluster (nodes, partitions, accounts, policies), not with the request"
)

// Bounds is every user-plane route's bound.
var Bounds = map[string]Bound{
	"POST /v1/jobs":                        {Body: maxSubmitBody, Answer: "one job ID; strings at most 64 KiB (script 2 MiB), lists at most 65,536 entries"},
	"POST /v1/jobs/test":                   {Body: maxSubmitBody, Answer: "the job as it would be stored, and one planning pass"},
	"GET /v1/jobs":                         {Query: maxQueryValues, Answer: answerStreamed},
	"GET /v1/jobs/{id}":                    {Answer: answerOne},
	"GET /v1/jobs/{id}/wait":               {Query: 1, Answer: "one state; the poll lasts at most 5 minutes"},
	"GET /v1/jobs/{id}/log":                {Query: 2, Answer: "one chunk, as much as the node sends"},
	"POST /v1/jobs/cancel":                 {Body: maxSmallBody, Refs: api.MaxRefsPerRequest, Answer: answerRefs + "; filters reach the caller's own jobs, 1,000 per commit"},
	"POST /v1/jobs/hold":                   {Body: maxSmallBody, Refs: api.MaxRefsPerRequest, Answer: answerRefs},
	"POST /v1/jobs/release":                {Body: maxSmallBody, Refs: api.MaxRefsPerRequest, Answer: answerRefs},
	"POST /v1/jobs/requeue":                {Body: maxSmallBody, Refs: api.MaxRefsPerRequest, Answer: answerRefs},
	"POST /v1/jobs/suspend":                {Body: maxSmallBody, Refs: api.MaxRefsPerRequest, Answer: answerRefs + "; one call per node of each job, in parallel"},
	"POST /v1/jobs/resume":                 {Body: maxSmallBody, Refs: api.MaxRefsPerRequest, Answer: answerRefs + "; one call per node of each job, in parallel"},
	"POST /v1/jobs/signal":                 {Body: maxSmallBody, Refs: api.MaxRefsPerRequest, Answer: answerRefs + "; one call per node of each job, in parallel"},
	"POST /v1/jobs/update":                 {Body: maxSmallBody, Answer: "one job (every task of an array)"},
	"POST /v1/jobs/{id}/allocation":        {Body: maxSmallBody, Answer: "one allocation's state and nodes"},
	"POST /v1/jobs/{id}/steps":             {Body: maxSmallBody, Answer: "one step grant: its layout lists at most the job's nodes"},
	"GET /v1/jobs/{id}/steps":              {Answer: "the job's steps, ended ones included"},
	"GET /v1/jobs/{id}/steps/{step}/stats": {Answer: "one step's tasks: at most the job's nodes' tasks"},
	"POST /v1/steps/cancel":                {Body: maxSmallBody, Answer: answerOne},
	"GET /v1/acct":                         {Query: maxQueryValues, Answer: "grows with the history the caller may see, not with the request"},
	"GET /v1/usage":                        {Query: 2, Answer: answerCluster},
	"GET /v1/prio":                         {Query: maxQueryValues, Answer: "grows with the pending jobs, not with the request"},
	"GET /v1/share":                        {Query: maxQueryValues, Answer: answerCluster},
	"GET /v1/nodes":                        {Answer: answerCluster},
	"GET /v1/partitions":                   {Answer: answerCluster},
	"GET /v1/config":                       {Answer: "the controller's settings: a fixed list"},
	"GET /v1/templates":                    {Answer: "corral.conf's resource templates: a fixed list"},
	"GET /v1/ping":                         {Answer: answerOne},
	"POST /v1/dashboard/login":             {Body: maxSmallBody, Answer: "one link"},
	"POST /v1/dashboard/logout-all":        {Body: maxSmallBody, Answer: answerOne},
	"GET /v1/images":                       {Answer: answerCluster},
	"GET /v1/policies":                     {Answer: answerCluster},
	"POST /v1/images":                      {Body: maxSmallBody, Answer: "one result per node"},
	"POST /v1/policies":                    {Body: maxSmallBody, Answer: "empty"},
	"GET /v1/admin/backup":                 {Answer: "the state file, streamed"},
	"GET /v1/admin/allocation":             {Answer: "at most 1,440 samples: a day at one a minute"},
	"POST /v1/nodes/drain":                 {Body: maxSmallBody, Refs: api.MaxRefsPerRequest, Answer: "the nodes changed; names expand to at most 10,000 nodes"},
	"POST /v1/nodes/down":                  {Body: maxSmallBody, Refs: api.MaxRefsPerRequest, Answer: "the nodes changed; names expand to at most 10,000 nodes"},
	"POST /v1/nodes/resume":                {Body: maxSmallBody, Refs: api.MaxRefsPerRequest, Answer: "the nodes changed; names expand to at most 10,000 nodes"},
}

// within applies the route's bound to r before its handler runs: the body
// is cut at the route's size (413 past it) and a query with more values
// than the route reads is refused. A route without a bound is refused,
// like a route without a rule.
func within(w http.ResponseWriter, r *http.Request, pattern string) *Refusal {
	b, ok := Bounds[pattern]
	if !ok {
		return refuse(fault.Forbidden, "route %s has no declared bound; refusing it (a controller bug: add it to authz.Bounds)", pattern)
	}
	if n := queryValues(r.URL.RawQuery); n > max(b.Query, 1) {
		return refuse(fault.Invalid, "%s: the query has %d values; at most %d are allowed", pattern, n, max(b.Query, 1))
	}
	if r.Body != nil && b.Body > 0 {
		r.Body = http.MaxBytesReader(w, r.Body, b.Body)
	}
	return nil
}

// queryValues counts a raw query's values as the handlers split them
// (key=a,b&key=c is three), without decoding it: an upper bound, cheap
// for any length.
func queryValues(raw string) int {
	if raw == "" {
		return 0
	}
	return 1 + strings.Count(raw, "&") + strings.Count(raw, ";") + strings.Count(raw, ",") +
		strings.Count(raw, "%2C") + strings.Count(raw, "%2c")
}
