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
// (by file and expression): an accounting row, a wait's answer.
var notJobStates = map[string]bool{
	"acct.go: r.State":    true,
	"wait.go: resp.State": true,
}

// Only package lifecycle changes a job's state: no non-test file elsewhere
// in the ctld tree assigns a State field (x.State = ..., a, x.State = ...)
// but those listed in notJobStates. A job built from scratch (a submit) is
// not an assignment. Syntax only, so it stays cheap: a new State field
// that is not a job's goes into notJobStates.
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
