package authz

// Rule is what one user-plane route demands. Min is checked by the gate,
// before the handler runs; Scope says, for docs/security.md and the
// matrix test, what the handler then checks per job (ownership).
type Rule struct {
	Min   Role
	Scope string
}

// Ownership scopes: what a caller below the named role reaches.
const (
	ScopeNone  = "-" // no per-job data
	ScopeView  = "own jobs; operator+ or SharedView=YES: all"
	ScopeAct   = "own jobs; operator+: any job" // hold, release, cancel, requeue, signal
	ScopeWrite = "own jobs; admin+: any job"    // update, steps (srun)
	ScopeLog   = "own jobs; operator+: any job; SharedView never"
	ScopeUsage = "own usage; operator+: all users"   // acct, usage
	ScopeSub   = "as the caller; root: --uid anyone" // submit
)

// UserRoutes is the authorization matrix of the user plane: every route
// the controller registers for users is here (ctld's
// TestMatrixCoversEveryRoute), and a route missing from it is refused.
var UserRoutes = map[string]Rule{
	"POST /v1/jobs":                        {User, ScopeSub},
	"POST /v1/jobs/test":                   {User, ScopeSub},
	"GET /v1/jobs":                         {User, ScopeView},
	"GET /v1/jobs/{id}":                    {User, ScopeView},
	"GET /v1/jobs/{id}/wait":               {User, ScopeView},
	"GET /v1/jobs/{id}/log":                {User, ScopeLog},
	"POST /v1/jobs/cancel":                 {User, ScopeAct},
	"POST /v1/jobs/hold":                   {User, ScopeAct},
	"POST /v1/jobs/release":                {User, ScopeAct},
	"POST /v1/jobs/requeue":                {User, ScopeAct},
	"POST /v1/jobs/suspend":                {Operator, ScopeAct},
	"POST /v1/jobs/resume":                 {Operator, ScopeAct},
	"POST /v1/jobs/signal":                 {User, ScopeAct},
	"POST /v1/jobs/update":                 {User, ScopeWrite},
	"POST /v1/jobs/{id}/allocation":        {User, ScopeAct},
	"POST /v1/jobs/{id}/steps":             {User, ScopeWrite},
	"GET /v1/jobs/{id}/steps":              {User, ScopeView},
	"GET /v1/jobs/{id}/steps/{step}/stats": {User, ScopeWrite},
	"POST /v1/steps/cancel":                {User, ScopeAct},
	"GET /v1/acct":                         {User, ScopeUsage},
	"GET /v1/usage":                        {User, ScopeUsage},
	"GET /v1/prio":                         {User, ScopeNone},
	"GET /v1/share":                        {User, ScopeNone},
	"GET /v1/nodes":                        {User, ScopeNone},
	"GET /v1/partitions":                   {User, ScopeNone},
	"GET /v1/config":                       {User, ScopeNone},
	"GET /v1/templates":                    {User, ScopeNone},
	"GET /v1/ping":                         {User, ScopeNone},
	"POST /v1/dashboard/login":             {User, ScopeNone},
	"POST /v1/dashboard/logout-all":        {User, ScopeNone},
	"GET /v1/images":                       {User, ScopeNone},
	"GET /v1/policies":                     {User, ScopeNone},
	"POST /v1/images":                      {Admin, ScopeNone},
	"POST /v1/policies":                    {Admin, ScopeNone},
	"GET /v1/admin/backup":                 {Admin, ScopeNone},
	"GET /v1/admin/allocation":             {Admin, ScopeNone},
	"POST /v1/nodes/drain":                 {Admin, ScopeNone},
	"POST /v1/nodes/down":                  {Admin, ScopeNone},
	"POST /v1/nodes/resume":                {Admin, ScopeNone},
}

// NodeRoutes is the node plane's matrix: every call needs the cluster
// key (api.Verify), which only daemons hold; there are no user roles.
var NodeRoutes = []string{"POST /v1/node/register", "POST /v1/node/events", "POST /v1/node/cert"}
