package runner

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// The step numbers in the runner's comments are the order execute runs
// the steps in, and the package comment says how many there are: a step
// added or moved without its comments fails here, not in a reader's head.
func TestStepCommentsFollowExecute(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{} // attempt method -> its doc comment
	var steps []string
	pkgDoc := ""
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if af.Doc != nil {
			pkgDoc += af.Doc.Text()
		}
		for _, d := range af.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); !ok || fmt.Sprint(star.X) != "attempt" {
				continue
			}
			docs[fn.Name.Name] = fn.Doc.Text()
			if fn.Name.Name != "execute" {
				continue
			}
			for _, st := range fn.Body.List {
				var call *ast.CallExpr
				switch s := st.(type) {
				case *ast.ExprStmt:
					call, _ = s.X.(*ast.CallExpr)
				case *ast.IfStmt: // if !x.step() { return }
					if u, ok := s.Cond.(*ast.UnaryExpr); ok {
						call, _ = u.X.(*ast.CallExpr)
					}
				}
				if call == nil {
					continue
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
					steps = append(steps, sel.Sel.Name)
				}
			}
		}
	}
	if len(steps) < 5 {
		t.Fatalf("execute's steps not found: %q", steps)
	}
	for i, s := range steps {
		if want := fmt.Sprintf("(step %d", i+1); !strings.Contains(docs[s], want) {
			t.Errorf("%s is step %d of execute, and its comment does not say %q: %q", s, i+1, want, strings.TrimSpace(docs[s]))
		}
	}
	words := []string{"", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen"}
	if len(steps) >= len(words) || !strings.Contains(pkgDoc, "the "+words[len(steps)]+" steps of one") {
		t.Errorf("execute runs %d steps (%s); the package comment says otherwise: %q", len(steps), strings.Join(steps, ", "), pkgDoc)
	}
}
