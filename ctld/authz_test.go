package ctld

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/authz"
)

// Matrix identities: uids of accounts every Debian-like host has.
const (
	uidOperator = 1 // daemon
	uidAdmin    = 2 // bin
	uidOwner    = 3 // sys: owns the jobs acted upon
)

const matrixConf = "PartitionName=batch Nodes=ALL\nAdminUsers=bin OperatorUsers=daemon\n"

// leastForOthers is the least role that reaches ANOTHER user's job (or
// data) under each ownership scope of package authz, SharedView off.
var leastForOthers = map[string]authz.Role{
	authz.ScopeNone:  authz.User,
	authz.ScopeView:  authz.Operator,
	authz.ScopeAct:   authz.Operator,
	authz.ScopeLog:   authz.Operator,
	authz.ScopeUsage: authz.Operator,
	authz.ScopeWrite: authz.Admin,
	authz.ScopeSub:   authz.Root,
}

// matrixCase builds one request against a fresh job of uidOwner and says
// whether the answer shows the caller got through to it.
type matrixCase struct {
	route   string
	request func(id uint64) (method, path string, body any)
	reached func(code int, body string) bool
}

// notRefused: the answer is not an authorization refusal (a 404 for a
// job that never ran, or a 400 for a body the test left empty, means the
// caller was let through).
func notRefused(code int, body string) bool {
	return code != http.StatusForbidden && !strings.Contains(body, "belongs to")
}

func matrixCases() []matrixCase {
	job := func(method, path string, body func(id uint64) any) func(uint64) (string, string, any) {
		return func(id uint64) (string, string, any) {
			var b any
			if body != nil {
				b = body(id)
			}
			return method, strings.ReplaceAll(path, "{id}", strconv.FormatUint(id, 10)), b
		}
	}
	ids := func(id uint64) any { return api.JobsRequest{IDs: []uint64{id}} }
	owner := uint32(uidOwner)
	onBehalf := func(uint64) any { return api.SubmitRequest{Spec: script("for-sys"), OnBehalfOf: &owner} }
	listed := func(code int, body string) bool { return code == 200 && strings.Contains(body, `"uid":3,`) }
	return []matrixCase{
		{"POST /v1/jobs", job("POST", "/v1/jobs", onBehalf), func(c int, _ string) bool { return c == 200 }},
		{"POST /v1/jobs/test", job("POST", "/v1/jobs/test", onBehalf), func(c int, _ string) bool { return c == 200 }},
		{"GET /v1/jobs", job("GET", "/v1/jobs?id={id}", nil), listed},
		{"GET /v1/jobs/{id}", job("GET", "/v1/jobs/{id}", nil), func(c int, _ string) bool { return c == 200 }},
		{"GET /v1/jobs/{id}/wait", job("GET", "/v1/jobs/{id}/wait?timeout_s=0", nil), func(c int, _ string) bool { return c == 200 }},
		{"GET /v1/jobs/{id}/log", job("GET", "/v1/jobs/{id}/log", nil), notRefused},
		{"POST /v1/jobs/cancel", job("POST", "/v1/jobs/cancel", func(id uint64) any { return api.CancelRequest{IDs: []uint64{id}} }), notRefused},
		{"POST /v1/jobs/hold", job("POST", "/v1/jobs/hold", ids), notRefused},
		{"POST /v1/jobs/release", job("POST", "/v1/jobs/release", ids), notRefused},
		{"POST /v1/jobs/requeue", job("POST", "/v1/jobs/requeue", ids), notRefused},
		// The job is pending: a caller let through hears Slurm's "pending execution".
		{"POST /v1/jobs/suspend", job("POST", "/v1/jobs/suspend", ids), func(c int, body string) bool { return c == 200 && strings.Contains(body, "Job is pending execution") }},
		{"POST /v1/jobs/resume", job("POST", "/v1/jobs/resume", ids), func(c int, body string) bool { return c == 200 && strings.Contains(body, "Job is pending execution") }},
		// The job is pending: a caller let through hears Slurm's "can not be altered now".
		{"POST /v1/jobs/signal", job("POST", "/v1/jobs/signal", func(id uint64) any {
			return api.SignalJobsRequest{JobsRequest: api.JobsRequest{IDs: []uint64{id}}, Signal: 10}
		}), func(c int, body string) bool { return c == 200 && strings.Contains(body, "can not be altered now") }},
		{"POST /v1/jobs/update", job("POST", "/v1/jobs/update", func(id uint64) any { return api.UpdateRequest{ID: id, Name: ptr("renamed")} }), notRefused},
		// The job is pending: a caller let through hears 409 (steps) or 404 (no step 0).
		// A batch job: a caller let through hears 400 (not an allocation).
		{"POST /v1/jobs/{id}/allocation", job("POST", "/v1/jobs/{id}/allocation", func(uint64) any { return api.AllocationRequest{} }), notRefused},
		{"POST /v1/jobs/{id}/steps", job("POST", "/v1/jobs/{id}/steps", func(uint64) any { return api.StepRequest{} }), notRefused},
		{"GET /v1/jobs/{id}/steps", job("GET", "/v1/jobs/{id}/steps", nil), func(c int, _ string) bool { return c == 200 }},
		{"GET /v1/jobs/{id}/steps/{step}/stats", job("GET", "/v1/jobs/{id}/steps/0/stats", nil), notRefused},
		{"POST /v1/steps/cancel", job("POST", "/v1/steps/cancel", func(id uint64) any { return map[string]any{"job_id": id, "step_id": 0} }), notRefused},
		{"GET /v1/acct", job("GET", "/v1/acct?user=sys", nil), notRefused},
		{"GET /v1/usage", job("GET", "/v1/usage?user=sys", nil), notRefused},
		{"GET /v1/prio", job("GET", "/v1/prio", nil), func(c int, _ string) bool { return c == 200 }},
		{"GET /v1/share", job("GET", "/v1/share", nil), func(c int, _ string) bool { return c == 200 }},
		{"GET /v1/nodes", job("GET", "/v1/nodes", nil), func(c int, _ string) bool { return c == 200 }},
		{"GET /v1/partitions", job("GET", "/v1/partitions", nil), func(c int, _ string) bool { return c == 200 }},
		{"GET /v1/config", job("GET", "/v1/config", nil), func(c int, _ string) bool { return c == 200 }},
		{"GET /v1/templates", job("GET", "/v1/templates", nil), func(c int, _ string) bool { return c == 200 }},
		{"GET /v1/ping", job("GET", "/v1/ping", nil), func(c int, _ string) bool { return c == 200 }},
		// No dashboard is served: a caller let through hears 404.
		{"POST /v1/dashboard/login", job("POST", "/v1/dashboard/login", nil), notRefused},
		{"POST /v1/dashboard/logout-all", job("POST", "/v1/dashboard/logout-all", nil), notRefused},
		{"GET /v1/images", job("GET", "/v1/images", nil), func(c int, _ string) bool { return c == 200 }},
		{"GET /v1/policies", job("GET", "/v1/policies", nil), func(c int, _ string) bool { return c == 200 }},
		{"POST /v1/images", job("POST", "/v1/images", func(uint64) any { return api.ImageRequest{Op: "remove", Ref: "docker.io/library/none:1"} }), notRefused},
		{"POST /v1/policies", job("POST", "/v1/policies", func(uint64) any { return map[string]any{} }), notRefused},
		{"GET /v1/admin/backup", job("GET", BackupPath, nil), func(c int, _ string) bool { return c == 200 }},
		{"GET /v1/admin/allocation", job("GET", "/v1/admin/allocation", nil), func(c int, _ string) bool { return c == 200 }},
		// No node is registered: an admin reaches the handler and hears 404.
		{"POST /v1/nodes/drain", job("POST", "/v1/nodes/drain", func(uint64) any { return api.DrainRequest{Nodes: []string{"n9"}, Reason: "x"} }),
			func(c int, _ string) bool { return c == http.StatusNotFound }},
		{"POST /v1/nodes/down", job("POST", "/v1/nodes/down", func(uint64) any { return api.DownRequest{Nodes: []string{"n9"}, Reason: "x"} }),
			func(c int, _ string) bool { return c == http.StatusNotFound }},
		{"POST /v1/nodes/resume", job("POST", "/v1/nodes/resume", func(uint64) any { return api.ResumeRequest{Nodes: []string{"n9"}} }),
			func(c int, _ string) bool { return c == http.StatusNotFound }},
	}
}

// TestAuthorizationMatrix walks every user-plane route for every role
// against another user's job: a user cannot see, cancel, hold, modify or
// read the logs of someone else's jobs; operators may view and control
// any job; only admins manage policies and images; only root submits for
// another user. The owner may do everything non-admin to their own job.
func TestAuthorizationMatrix(t *testing.T) {
	tc := MustServer(t, withPartitions(matrixConf))
	callers := []struct {
		uid  uint32
		role authz.Role
	}{{nobody, authz.User}, {uidOperator, authz.Operator}, {uidAdmin, authz.Admin}, {0, authz.Root}}
	for _, c := range matrixCases() {
		rule, ok := authz.UserRoutes[c.route]
		if !ok {
			t.Fatalf("matrix case %s is not in authz.UserRoutes", c.route)
		}
		least := max(rule.Min, leastForOthers[rule.Scope])
		for _, who := range callers {
			t.Run(c.route+"/"+who.role.String(), func(t *testing.T) {
				id := tc.submitFor(uidOwner, script("victim"))
				method, path, body := c.request(id)
				code, out := callAs(t, tc, who.uid, method, path, body)
				want := who.role >= least
				if got := c.reached(code, string(out)); got != want {
					t.Errorf("%s %s as %s (uid %d): reached=%v, want %v (least role %s): %d %s",
						method, path, who.role, who.uid, got, want, least, code, out)
				}
				if !want && code == http.StatusForbidden && !strings.Contains(string(out), "role") && !strings.Contains(string(out), "only") &&
					!strings.Contains(string(out), "belongs to") {
					t.Errorf("refusal does not say why: %s", out)
				}
			})
		}
		if rule.Min == authz.User && rule.Scope != authz.ScopeSub {
			t.Run(c.route+"/owner", func(t *testing.T) {
				id := tc.submitFor(uidOwner, script("own"))
				method, path, body := c.request(id)
				if code, out := callAs(t, tc, uidOwner, method, path, body); !c.reached(code, string(out)) {
					t.Errorf("the owner is refused %s %s: %d %s", method, path, code, out)
				}
			})
		}
	}
}

// TestMatrixCoversEveryRoute reads the package's source: every route
// registered with withCaller must have a rule, every rule a route, and
// the matrix test a case for each.
func TestMatrixCoversEveryRoute(t *testing.T) {
	registered := userPlaneRoutesInSource(t)
	if len(registered) < 10 {
		t.Fatalf("found only %d routes in the source: %v", len(registered), registered)
	}
	for _, r := range registered {
		if _, ok := authz.UserRoutes[r]; !ok {
			t.Errorf("route %s is registered but has no rule in authz.UserRoutes", r)
		}
	}
	var cased []string
	for _, c := range matrixCases() {
		cased = append(cased, c.route)
	}
	for r := range authz.UserRoutes {
		if !slices.Contains(registered, r) {
			t.Errorf("authz.UserRoutes has %s, which no handler registers", r)
		}
		if !slices.Contains(cased, r) {
			t.Errorf("TestAuthorizationMatrix has no case for %s", r)
		}
	}
	// docs/security.md lists every route of both planes.
	doc, err := os.ReadFile(filepath.Join("..", "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range append(slices.Clone(registered), authz.NodeRoutes...) {
		if !strings.Contains(string(doc), "`"+r+"`") {
			t.Errorf("docs/security.md does not list `%s`", r)
		}
	}
}

// userPlaneRoutesInSource finds mux.HandleFunc("PATTERN", withCaller(...))
// calls in the package's non-test files.
func userPlaneRoutesInSource(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var parsed []*ast.File
	consts := map[string]ast.Expr{} // package-level constants, for patterns built from them
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							consts[n.Name] = vs.Values[i]
						}
					}
				}
			}
		}
	}
	for _, f := range parsed {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 2 {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "HandleFunc" {
				return true
			}
			inner, ok := call.Args[1].(*ast.CallExpr)
			if !ok {
				return true
			}
			if id, ok := inner.Fun.(*ast.Ident); !ok || id.Name != "withCaller" {
				return true
			}
			p, ok := stringValue(call.Args[0], consts)
			if !ok {
				t.Errorf("%s: a user-plane route whose pattern is not a string constant", fset.Position(call.Pos()))
				return true
			}
			out = append(out, p)
			return true
		})
	}
	return out
}

// stringValue evaluates a string literal, a package string constant, or
// a + of them.
func stringValue(e ast.Expr, consts map[string]ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.Ident:
		if v, ok := consts[e.Name]; ok {
			return stringValue(v, consts)
		}
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			a, ok1 := stringValue(e.X, consts)
			b, ok2 := stringValue(e.Y, consts)
			return a + b, ok1 && ok2
		}
	case *ast.ParenExpr:
		return stringValue(e.X, consts)
	}
	return "", false
}

// TestUnknownRouteFailsClosed: a route served without a rule is refused.
func TestUnknownRouteFailsClosed(t *testing.T) {
	tc := MustServer(t)
	saved := authz.UserRoutes["GET /v1/ping"]
	delete(authz.UserRoutes, "GET /v1/ping")
	defer func() { authz.UserRoutes["GET /v1/ping"] = saved }()
	code, body := callAs(t, tc, 0, "GET", "/v1/ping", nil)
	if code != http.StatusForbidden || !strings.Contains(string(body), "no authorization rule") {
		t.Fatalf("ping without a rule: %d %s", code, body)
	}
}
