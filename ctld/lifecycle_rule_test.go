package ctld

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// notJobStates are the State fields in the ctld tree that are not a job's
// (by file and expression): an accounting row, a wait's answer, a step.
var notJobStates = map[string]bool{
	"acct.go: r.State":        true,
	"wait.go: resp.State":     true,
	"stepcommit.go: st.State": true,
}

// Only package lifecycle sets a job's state: no non-test file elsewhere
// in the ctld tree assigns a State field (x.State = ..., a, x.State = ...)
// but those listed in notJobStates, nor builds an api.Job or an
// api.Transition with a State (a submit's first record comes from
// lifecycle.New). Syntax only, so it stays cheap: a new State field that
// is not a job's goes into notJobStates.
func TestOnlyLifecycleAssignsState(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path == "lifecycle":
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.CompositeLit); ok {
				if name, ok := jobStateLiteral(lit); ok {
					t.Errorf("%s: builds an %s with a State outside package lifecycle (a new job's comes from lifecycle.New)", fset.Position(lit.Pos()), name)
				}
				return true
			}
			as, ok := n.(*ast.AssignStmt)
			if !ok {
				return true
			}
			for _, lhs := range as.Lhs {
				sel, ok := lhs.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "State" {
					continue
				}
				if x, ok := sel.X.(*ast.Ident); ok && notJobStates[path+": "+x.Name+".State"] {
					continue
				}
				t.Errorf("%s: assigns a State outside package lifecycle (a job's goes through lifecycle.Next)", fset.Position(lhs.Pos()))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// jobStateLiteral reports whether lit is an api.Job or api.Transition
// literal, or a list of them, that sets a State, and which type it is.
func jobStateLiteral(lit *ast.CompositeLit) (string, bool) {
	typ := lit.Type
	if arr, ok := typ.(*ast.ArrayType); ok {
		typ = arr.Elt
	}
	sel, ok := typ.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok || pkg.Name != "api" || sel.Sel.Name != "Job" && sel.Sel.Name != "Transition" {
		return "", false
	}
	name := "api." + sel.Sel.Name
	hasState := func(l *ast.CompositeLit) bool {
		for _, e := range l.Elts {
			if kv, ok := e.(*ast.KeyValueExpr); ok {
				if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "State" {
					return true
				}
			}
		}
		return false
	}
	if lit.Type != typ { // a list: its elements' types are elided
		for _, e := range lit.Elts {
			if el, ok := e.(*ast.CompositeLit); ok && hasState(el) {
				return name, true
			}
		}
		return "", false
	}
	return name, hasState(lit)
}
