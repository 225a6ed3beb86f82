package policies_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsNamesExist checks that every policies.X and anthropicsdk.X that
// docs/client.md names is declared by that package, so a rename cannot
// leave the page describing an API that is gone.
func TestDocsNamesExist(t *testing.T) {
	doc, err := os.ReadFile("../docs/client.md")
	if err != nil {
		t.Fatal(err)
	}
	for pkg, dir := range map[string]string{"policies": ".", "anthropicsdk": "anthropicsdk"} {
		declared := exportedNames(t, dir)
		re := regexp.MustCompile(`\b` + pkg + `\.([A-Z]\w*)`)
		matches := re.FindAllStringSubmatch(string(doc), -1)
		if len(matches) == 0 {
			t.Errorf("docs/client.md names nothing from %s", pkg)
		}
		for _, m := range matches {
			if !declared[m[1]] {
				t.Errorf("docs/client.md names %s.%s, which %s does not declare", pkg, m[1], dir)
			}
		}
	}
}

// exportedNames returns the exported top-level names declared by the
// non-test Go files in dir.
func exportedNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
	}
	if len(names) == 0 {
		t.Fatalf("no declarations in %s", dir)
	}
	return names
}
