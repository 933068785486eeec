package ctld

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The package's files each hold one concern. A file's concerns are read
// from what its code refers to, not from its name or comments:
//
//   - http: request handling, route tables and their middleware: it names
//     http.ResponseWriter, http.Request, http.Handler, http.HandlerFunc or
//     http.ServeMux (a node client's http.MethodPost or a status code is
//     not handling);
//   - queue: the jobs' state: the Server's queue (a .q selector), the
//     queue's own methods (its commit among them) or a lifecycle event;
//   - nodes: node tracking: the Server's node registry (a .nodes
//     selector) or the registry's own methods;
//   - scheduling: the planner, the cycle lock or the snapshot builder;
//   - accounting: the fairshare usage ledger (package ctld/fairshare, the
//     Server's .fs);
//   - authorization: a decision about roles made here rather than asked
//     of the authz Gate: a role constant (authz.Admin, ...), RoleOf, or
//     an AtLeast/atLeast test;
//   - state lock: taking Server.mu, which guards the queue and the nodes.
//
// Handlers reach the rest through domain methods that take the locks and
// make the ownership checks (with the Gate), so a file that handles HTTP
// has no other concern.
type concern string

const (
	cHTTP    concern = "http"
	cQueue   concern = "queue"
	cNodes   concern = "nodes"
	cSched   concern = "scheduling"
	cAcct    concern = "accounting"
	cAuthz   concern = "authorization"
	cStateMu concern = "state lock"
)

var (
	httpTypes    = []string{"ResponseWriter", "Request", "Handler", "HandlerFunc", "ServeMux", "NewServeMux"}
	schedMarkers = []string{"planner", "cycleMu", "snapshots"}
	roleNames    = []string{"User", "Operator", "Admin", "Root", "Role"}
	roleTests    = []string{"RoleOf", "AtLeast", "atLeast"}
	lockCalls    = []string{"Lock", "RLock"}
)

// concernsOf reads one file's concerns.
func concernsOf(f *ast.File) map[concern]bool {
	imports := map[string]string{} // local name -> path
	for _, im := range f.Imports {
		path := strings.Trim(im.Path.Value, `"`)
		name := filepath.Base(path)
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = path
	}
	out := map[concern]bool{}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && len(fd.Recv.List) == 1 {
			switch recvType(fd.Recv.List[0].Type) {
			case "queue":
				out[cQueue] = true
			case "nodeRegistry":
				out[cNodes] = true
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if pkg, ok := n.X.(*ast.Ident); ok && imports[pkg.Name] != "" {
				switch path := imports[pkg.Name]; {
				case path == "net/http" && slices.Contains(httpTypes, n.Sel.Name):
					out[cHTTP] = true
				case strings.HasSuffix(path, "/ctld/lifecycle"):
					out[cQueue] = true
				case strings.HasSuffix(path, "/ctld/fairshare"):
					out[cAcct] = true
				case strings.HasSuffix(path, "/ctld/authz") && slices.Contains(roleNames, n.Sel.Name):
					out[cAuthz] = true
				}
				return true
			}
			switch name := n.Sel.Name; {
			case name == "q":
				out[cQueue] = true
			case name == "nodes":
				out[cNodes] = true
			case name == "fs":
				out[cAcct] = true
			case slices.Contains(schedMarkers, name):
				out[cSched] = true
			case slices.Contains(roleTests, name):
				out[cAuthz] = true
			case slices.Contains(lockCalls, name):
				if inner, ok := n.X.(*ast.SelectorExpr); ok && inner.Sel.Name == "mu" && isServer(inner.X) {
					out[cStateMu] = true
				}
			}
		}
		return true
	})
	return out
}

// isServer reports whether e is the Server as the package's code names
// it: s, or an endpoint's srv.
func isServer(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name == "s"
	case *ast.SelectorExpr:
		return e.Sel.Name == "srv"
	}
	return false
}

func recvType(e ast.Expr) string {
	if st, ok := e.(*ast.StarExpr); ok {
		e = st.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// packageFiles parses the package's non-test files.
func packageFiles(t *testing.T) (map[string]*ast.File, *token.FileSet) {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
	}
	if len(files) < 20 {
		t.Fatalf("found only %d files: run the test in the package's directory", len(files))
	}
	return files, fset
}

func sortedConcerns(cs map[concern]bool) []string {
	var out []string
	for c := range cs {
		out = append(out, string(c))
	}
	sort.Strings(out)
	return out
}

// TestLayout: no file handles HTTP and also touches the queue, the
// nodes, the planner, the usage ledger, the state lock or role
// decisions; and no file decides roles beside anything else (ownership
// checks are the Gate's). The other concerns of every file are logged
// (-v), for the next split.
func TestLayout(t *testing.T) {
	files, _ := packageFiles(t)
	var names []string
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	httpFiles := 0
	for _, name := range names {
		cs := concernsOf(files[name])
		if len(cs) > 0 {
			t.Logf("%-22s %s", name, strings.Join(sortedConcerns(cs), ", "))
		}
		if cs[cAuthz] && len(cs) > 1 {
			t.Errorf("%s decides roles itself and also holds %s: ask the authz Gate instead",
				name, strings.Join(slices.DeleteFunc(sortedConcerns(cs), func(c string) bool { return c == string(cAuthz) }), ", "))
		}
		if !cs[cHTTP] {
			continue
		}
		httpFiles++
		if len(cs) > 1 {
			t.Errorf("%s handles HTTP and also holds %s: move that work into a domain method the handler calls",
				name, strings.Join(slices.DeleteFunc(sortedConcerns(cs), func(c string) bool { return c == string(cHTTP) }), ", "))
		}
	}
	if httpFiles < 5 {
		t.Errorf("only %d files handle HTTP: the markers no longer find the handlers", httpFiles)
	}
}

// TestLayoutMarkers: the classification finds each concern in code that
// holds it and nothing in code that does not, so TestLayout cannot pass
// by finding nothing.
func TestLayoutMarkers(t *testing.T) {
	const head = `package ctld
import (
	"net/http"
	"github.com/corral-hpc/corral/ctld/authz"
	"github.com/corral-hpc/corral/ctld/fairshare"
	"github.com/corral-hpc/corral/ctld/lifecycle"
)
`
	for _, c := range []struct {
		body string
		want []concern
	}{
		{`func h(w http.ResponseWriter, r *http.Request) {}`, []concern{cHTTP}},
		{`func routes() { mux := http.NewServeMux(); _ = mux }`, []concern{cHTTP}},
		{`func (x *Server) f() { x.q.job(1) }`, []concern{cQueue}},
		{`func (q *queue) f() {}`, []concern{cQueue}},
		{`func f() { _ = lifecycle.Event{} }`, []concern{cQueue}},
		{`func (e jobsEndpoint) f() { e.srv.nodes.get("a") }`, []concern{cNodes}},
		{`func (r *nodeRegistry) f() {}`, []concern{cNodes}},
		{`func (x *Server) f() { x.planner.Plan(nil) }`, []concern{cSched}},
		{`func (x *Server) f() { x.snapshots.build() }`, []concern{cSched}},
		{`func f(p fairshare.Pending) {}`, []concern{cAcct}},
		{`func (x *Server) f(uid uint32) bool { return x.gate.RoleOf(uid) >= authz.Admin }`, []concern{cAuthz}},
		{`func (e jobsEndpoint) f() { e.srv.mu.RLock() }`, []concern{cStateMu}},
		// Not concerns: a node client's method and status, the Gate's
		// ownership answers, another type's lock, a wake-time helper.
		{`func (x *Server) f(c *api.NodeClient) { c.Do(nil, http.MethodPost, "/", nil, nil); _ = http.StatusOK }`, nil},
		{`func (x *Server) f(p peer) bool { return x.gate.MayView(p.caller(), 1) }`, nil},
		{`func (c *nonceCache) f() { c.mu.Lock() }`, nil},
		{`func f(n *cycleNotes) { n.wakeAtLeast(t) }`, nil},
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", head+c.body, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		got := concernsOf(f)
		want := map[concern]bool{}
		for _, w := range c.want {
			want[w] = true
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s: found %v, want %v", c.body, sortedConcerns(got), sortedConcerns(want))
		}
	}
	// And in the package itself: the endpoint files are found to handle HTTP.
	files, _ := packageFiles(t)
	if f := files["jobs_endpoint.go"]; f == nil || !concernsOf(f)[cHTTP] {
		t.Errorf("jobs_endpoint.go is not found to handle HTTP")
	}
}

// maxServerMethods bounds *Server's method set. The controller was one
// object with 126 methods; each concern now has a type of its own (the
// queue, the node registry, the snapshot builder, the endpoint types, the
// authz Gate, ...) and the Server keeps the domain operations that span
// them. A new method goes on the type whose state it touches; raise the
// bound only for an operation that truly spans concerns, and say why in
// the commit.
const maxServerMethods = 64

func TestServerMethodCount(t *testing.T) {
	files, _ := packageFiles(t)
	n := 0
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && len(fd.Recv.List) == 1 && recvType(fd.Recv.List[0].Type) == "Server" {
				n++
			}
		}
	}
	if n > maxServerMethods {
		t.Errorf("*Server has %d methods, more than %d: put the new ones on the type that owns the state they touch", n, maxServerMethods)
	}
	if n < 20 {
		t.Errorf("found only %d methods on *Server: the count no longer finds them", n)
	}
}
