package ctld

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The package's files each hold at most one concern. A file holds a
// concern when it holds the state of that concern's owner: it declares
// the owner's types or methods, builds an owner's value field by field,
// or reads or writes an owner's fields. Calling an owner's methods is
// using it, not holding it. The concerns and their owners:
//
//   - http: request handling, route tables and their middleware: it names
//     http.ResponseWriter, http.Request, http.Handler, http.HandlerFunc or
//     http.ServeMux (a node client's http.MethodPost or a status code is
//     not handling);
//   - queue: queue, job (its launch state and steps among it), arrayJob
//     and change, the commit's unit;
//   - nodes: nodeRegistry and node;
//   - scheduling: the snapshot builder and its notes, the cycle pacer,
//     the pipeline state, and the Server's cycle lock;
//   - accounting: the usage ledger and the history's views;
//   - authorization: a decision about roles made here rather than asked
//     of the authz Gate: a role constant (authz.Admin, ...), RoleOf, or
//     an AtLeast/atLeast test.
//
// *Server methods are the controller's operations: one user-visible
// operation that sequences owners' methods (cancel a job: the queue's
// change, then the node's signal). They hold nothing of their own, and
// taking Server.mu is theirs, so an operation file holds at most the one
// owner whose fields it reads.
type concern string

const (
	cHTTP  concern = "http"
	cQueue concern = "queue"
	cNodes concern = "nodes"
	cSched concern = "scheduling"
	cAcct  concern = "accounting"
	cAuthz concern = "authorization"
)

// owners maps each owner type of package ctld to its concern.
var owners = map[string]concern{
	"queue": cQueue, "job": cQueue, "launchState": cQueue, "jobSteps": cQueue,
	"arrayJob": cQueue, "remChange": cQueue, "change": cQueue,
	"nodeRegistry": cNodes, "node": cNodes,
	"snapshotBuilder": cSched, "cycleNotes": cSched, "groupBuilder": cSched,
	"cyclePacer": cSched, "pipeline": cSched,
	"usageLedger": cAcct, "acctHistory": cAcct,
}

// serverOwned are the Server's fields that are an owner's state rather
// than a handle on an owner.
var serverOwned = map[string]concern{"cycleMu": cSched}

var (
	httpTypes = []string{"ResponseWriter", "Request", "Handler", "HandlerFunc", "ServeMux", "NewServeMux"}
	roleNames = []string{"User", "Operator", "Admin", "Root", "Role"}
	roleTests = []string{"RoleOf", "AtLeast", "atLeast"}
)

// ownerOf is the concern of t's owner, if t (or what it points to) is an
// owner type of this package.
func ownerOf(t types.Type, pkg *types.Package) concern {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() != pkg {
		return ""
	}
	if n.Obj().Name() == "Server" {
		return ""
	}
	return owners[n.Obj().Name()]
}

// concernSites reads one file's concerns and records in at every place
// one was found; info is the package's, checked with f among its files.
func concernSites(f *ast.File, info *types.Info, pkg *types.Package, at map[concern][]token.Pos) map[concern]bool {
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
	var pos token.Pos
	add := func(c concern) {
		if c != "" {
			out[c] = true
			if at != nil {
				at[c] = append(at[c], pos)
			}
		}
	}
	for _, d := range f.Decls {
		pos = d.Pos()
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil && len(d.Recv.List) == 1 {
				add(owners[recvType(d.Recv.List[0].Type)])
			}
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				if ts, ok := sp.(*ast.TypeSpec); ok {
					add(owners[ts.Name.Name])
				}
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if n != nil {
			pos = n.Pos()
		}
		switch n := n.(type) {
		case *ast.CompositeLit:
			if tv, ok := info.Types[n]; ok && len(n.Elts) > 0 {
				add(ownerOf(tv.Type, pkg))
			}
		case *ast.SelectorExpr:
			if pkgID, ok := n.X.(*ast.Ident); ok && imports[pkgID.Name] != "" {
				if _, isPkg := info.Uses[pkgID].(*types.PkgName); isPkg {
					switch path := imports[pkgID.Name]; {
					case path == "net/http" && slices.Contains(httpTypes, n.Sel.Name):
						add(cHTTP)
					case strings.HasSuffix(path, "/ctld/authz") && slices.Contains(roleNames, n.Sel.Name):
						add(cAuthz)
					}
					return true
				}
			}
			if slices.Contains(roleTests, n.Sel.Name) {
				add(cAuthz)
			}
			sel := info.Selections[n]
			if sel == nil || sel.Kind() != types.FieldVal {
				return true
			}
			recv := sel.Recv()
			if p, ok := recv.(*types.Pointer); ok {
				recv = p.Elem()
			}
			if nt, ok := recv.(*types.Named); ok && nt.Obj().Pkg() == pkg && nt.Obj().Name() == "Server" {
				add(serverOwned[n.Sel.Name])
				return true
			}
			add(ownerOf(sel.Recv(), pkg))
		}
		return true
	})
	return out
}

func recvType(e ast.Expr) string {
	if st, ok := e.(*ast.StarExpr); ok {
		e = st.X
	}
	if ix, ok := e.(*ast.IndexExpr); ok {
		e = ix.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// checkedPackage is package ctld parsed and type-checked.
type checkedPackage struct {
	fset  *token.FileSet
	files map[string]*ast.File
	imp   types.Importer
}

// loadPackage parses the package's non-test files and prepares an
// importer of their dependencies' export data (go list -export builds it).
func loadPackage(t *testing.T) *checkedPackage {
	t.Helper()
	p := &checkedPackage{}
	p.files, p.fset = packageFiles(t)
	out, err := exec.Command("go", "list", "-export", "-deps", "-tags", "seccomp",
		"-f", "{{if .Export}}{{.ImportPath}}\t{{.Export}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok {
			exports[path] = file
		}
	}
	p.imp = importer.ForCompiler(p.fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, os.ErrNotExist
		}
		return os.Open(file)
	})
	return p
}

// check type-checks the package's files plus extra (a sample) and returns
// every file's concerns and where each was found.
func (p *checkedPackage) check(t *testing.T, extra map[string]*ast.File) (map[string]map[concern]bool, map[string]map[concern][]token.Pos) {
	t.Helper()
	files := maps.Clone(p.files)
	maps.Copy(files, extra)
	var list []*ast.File
	for _, name := range slices.Sorted(maps.Keys(files)) {
		list = append(list, files[name])
	}
	info := &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	conf := types.Config{Importer: p.imp}
	pkg, err := conf.Check("github.com/corral-hpc/corral/ctld", p.fset, list, info)
	if err != nil {
		t.Fatalf("type-checking the package: %v", err)
	}
	out := map[string]map[concern]bool{}
	sites := map[string]map[concern][]token.Pos{}
	for name, f := range files {
		sites[name] = map[concern][]token.Pos{}
		out[name] = concernSites(f, info, pkg, sites[name])
	}
	return out, sites
}

// where names the first few places each of cs was found.
func (p *checkedPackage) where(cs map[concern][]token.Pos) string {
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(cs)) {
		var at []string
		for _, pos := range cs[c][:min(3, len(cs[c]))] {
			at = append(at, fmt.Sprint(p.fset.Position(pos).Line))
		}
		parts = append(parts, fmt.Sprintf("%s (line %s)", c, strings.Join(at, ", ")))
	}
	return strings.Join(parts, "; ")
}

func sortedConcerns(cs map[concern]bool) []string {
	var out []string
	for c := range cs {
		out = append(out, string(c))
	}
	sort.Strings(out)
	return out
}

// TestLayout: every non-test file of the package holds at most one
// concern. Each file's concern is logged (-v).
func TestLayout(t *testing.T) {
	p := loadPackage(t)
	all, sites := p.check(t, nil)
	seen := map[concern]int{}
	for _, name := range slices.Sorted(maps.Keys(all)) {
		cs := all[name]
		t.Logf("%-22s %s", name, strings.Join(sortedConcerns(cs), ", "))
		for c := range cs {
			seen[c]++
		}
		if len(cs) > 1 {
			t.Errorf("%s holds %s: one concern per file; move the others' part into a method of their owner",
				name, p.where(sites[name]))
		}
	}
	for _, c := range []concern{cHTTP, cQueue, cNodes, cSched, cAcct, cAuthz} {
		if seen[c] == 0 {
			t.Errorf("no file holds %s: the markers no longer find it", c)
		}
	}
	if seen[cHTTP] < 5 {
		t.Errorf("only %d files handle HTTP: the markers no longer find the handlers", seen[cHTTP])
	}
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

// TestLayoutMarkers: the classification finds each concern in code that
// holds it and nothing in code that only uses an owner, so TestLayout
// cannot pass by finding nothing; and a file planted with two concerns
// is one TestLayout would refuse.
func TestLayoutMarkers(t *testing.T) {
	p := loadPackage(t)
	const sample = "zz_layout_sample.go"
	for _, c := range []struct {
		imports, body string
		want          []concern
	}{
		{`"net/http"`, `func h(w http.ResponseWriter, r *http.Request) {}`, []concern{cHTTP}},
		{`"net/http"`, `func routes() { mux := http.NewServeMux(); _ = mux }`, []concern{cHTTP}},
		{``, `func (q *queue) sample() {}`, []concern{cQueue}},
		{``, `func (x *Server) sample() { _ = x.q.jobs }`, []concern{cQueue}},
		{``, `func sample(j *job) bool { return j.cancelRequested }`, []concern{cQueue}},
		{``, `func sample(j *job) { j.launch.inFlight-- }`, []concern{cQueue}},
		{``, `func sample() *job { return &job{cancelRequested: true} }`, []concern{cQueue}},
		{``, `func (r *nodeRegistry) sample() {}`, []concern{cNodes}},
		{``, `func sample(r *nodeRegistry) int { return len(r.byName) }`, []concern{cNodes}},
		{``, `func sample(n *node) bool { return n.up }`, []concern{cNodes}},
		{``, `func (x *Server) sample() { x.cycleMu.Lock() }`, []concern{cSched}},
		{``, `func (x *Server) sample() { _ = x.pipe.avoid }`, []concern{cSched}},
		{``, `func (b *snapshotBuilder) sample() {}`, []concern{cSched}},
		{``, `func sample(l *usageLedger) { _ = l.store }`, []concern{cAcct}},
		{`"github.com/corral-hpc/corral/ctld/authz"`, `func (x *Server) sample(uid uint32) bool { return x.gate.RoleOf(uid) >= authz.Admin }`, []concern{cAuthz}},
		// Not concerns: an owner's methods called, the Server's own lock
		// and fields, a node client's method and status, the Gate's
		// ownership answers, a wake-time helper.
		{``, `func (x *Server) sample() { x.mu.Lock(); defer x.mu.Unlock(); _ = x.q.job(1) }`, nil},
		{``, `func (x *Server) sample(j *job) bool { return j.state() == "" && x.nodes.get("a") != nil }`, nil},
		{`"net/http"; "github.com/corral-hpc/corral/api"`, `func (x *Server) sample(c *api.NodeClient) { _ = c.Do(nil, http.MethodPost, "/", nil, nil); _ = http.StatusOK }`, nil},
		{``, `func (x *Server) sample(p peer) bool { return x.gate.MayView(p.caller(), 1) }`, nil},
		{``, `func sample(c *nonceCache) { c.mu.Lock() }`, nil},
		// Planted: an operation that reaches into a job and a node.
		{``, `func (x *Server) sample(j *job, n *node) { j.cancelRequested = n.up }`, []concern{cNodes, cQueue}},
	} {
		src := "package ctld\n"
		if c.imports != "" {
			src += "import (" + c.imports + ")\n"
		}
		src += c.body + "\n"
		f, err := parser.ParseFile(p.fset, sample, src, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		all, _ := p.check(t, map[string]*ast.File{sample: f})
		got := all[sample]
		want := map[concern]bool{}
		for _, w := range c.want {
			want[w] = true
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s: found %v, want %v", c.body, sortedConcerns(got), sortedConcerns(want))
		}
	}
}

// maxServerMethods bounds *Server's method set. The controller was one
// object with 126 methods; each concern now has a type of its own (the
// queue, the node registry, the snapshot builder, the endpoint types, the
// authz Gate, ...) and the Server keeps the domain operations that span
// them. A new method goes on the type whose state it touches; raise the
// bound only for an operation that truly spans concerns, and say why in
// the commit.
const maxServerMethods = 68

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
