package sim

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// Test switches live in export_test.go as seams (functions that set an
// unexported field of a run's configuration or model), not as package
// variables of the production code that tests flip: no package-level
// variable declared outside _test.go files is assigned in a _test.go file.
func TestNoTestSwitchesInProductionVariables(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	vars := map[string]string{} // name → file declaring it
	var tests []*ast.File
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, "_test.go") {
			tests = append(tests, f)
			continue
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, spec := range g.Specs {
					for _, id := range spec.(*ast.ValueSpec).Names {
						if id.Name != "_" {
							vars[id.Name] = name
						}
					}
				}
			}
		}
	}
	if len(vars) == 0 || len(tests) == 0 {
		t.Fatalf("%d package variables, %d test files: the scan found nothing", len(vars), len(tests))
	}
	for _, f := range tests {
		ast.Inspect(f, func(n ast.Node) bool {
			var lhs []ast.Expr
			switch s := n.(type) {
			case *ast.AssignStmt:
				if s.Tok != token.DEFINE {
					lhs = s.Lhs
				}
			case *ast.IncDecStmt:
				lhs = []ast.Expr{s.X}
			}
			for _, e := range lhs {
				// id.Obj is nil for a name the file does not declare: one
				// of the package's other files.
				if id, ok := e.(*ast.Ident); ok && vars[id.Name] != "" && id.Obj == nil {
					t.Errorf("%s: a test sets %s, a package variable of %s: make it a seam in export_test.go", fset.Position(id.Pos()), id.Name, vars[id.Name])
				}
			}
			return true
		})
	}
}
