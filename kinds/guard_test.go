package kinds

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	pathpkg "path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// kindMethods marks a concrete kind: a type of package sim with one of
// these methods is a server model, a workload or a distribution; one of
// package policies/machine a backoff, a coordinator or a coordinator's spec
// (which package policies names too, by aliases of the same names).
var kindMethods = map[string][]string{
	"sim":              {"NewServer", "Operations", "Sample"},
	"policies/machine": {"Delay", "NewCoordinator", "Admit"},
}

// concreteKinds returns, per package, the names of its concrete kinds.
func concreteKinds(t *testing.T, root string) map[string]map[string]bool {
	t.Helper()
	return typesWithMethods(t, root, kindMethods)
}

// typesWithMethods returns, per package of methods, the names of the types
// of its non-test files with one of the package's methods.
func typesWithMethods(t *testing.T, root string, methods map[string][]string) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	for pkg, methods := range methods {
		out[pkg] = map[string]bool{}
		files, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 {
					continue
				}
				for _, m := range methods {
					if fd.Name.Name == m {
						out[pkg][receiverName(fd.Recv.List[0].Type)] = true
					}
				}
			}
		}
		if len(out[pkg]) == 0 {
			t.Fatalf("no kinds found in %s: the guard would prove nothing", pkg)
		}
	}
	out["policies"] = out["policies/machine"]
	return out
}

func receiverName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return receiverName(e.X)
	case *ast.Ident:
		return e.Name
	case *ast.IndexExpr:
		return receiverName(e.X)
	}
	return ""
}

// The guard of docs/architecture.md ("Where a new capability goes"): no
// file outside sim/, policies/ and kinds/ names a concrete kind (a server
// model, workload, distribution, backoff or coordinator type), and no
// file outside kinds/ switches on the type of a kind: every fact about a
// kind is in its model's file and its registration.
func TestNoKindNamedOutsideItsFiles(t *testing.T) {
	root := ".."
	known := concreteKinds(t, root)
	var problems []string
	err := walkNonTestGo(root, func(rel string, f *ast.File) error {
		top, _, _ := strings.Cut(rel, "/")
		// The local names of sim and policies in this file ("" inside
		// the package itself).
		local := map[string]string{}
		if dir := pathpkg.Dir(rel); known[dir] != nil {
			local[""] = dir
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			for pkg := range known {
				if p == "github.com/retrysim/retrysim/"+pkg {
					name := pathpkg.Base(pkg)
					if imp.Name != nil {
						name = imp.Name.Name
					}
					local[name] = pkg
				}
			}
		}
		kindOf := func(e ast.Expr) string {
			switch e := e.(type) {
			case *ast.StarExpr:
				e2 := e.X
				if sel, ok := e2.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && known[local[id.Name]][sel.Sel.Name] {
						return local[id.Name] + "." + sel.Sel.Name
					}
				}
				if id, ok := e2.(*ast.Ident); ok && local[""] != "" && known[local[""]][id.Name] {
					return local[""] + "." + id.Name
				}
			case *ast.SelectorExpr:
				if id, ok := e.X.(*ast.Ident); ok && known[local[id.Name]][e.Sel.Name] {
					return local[id.Name] + "." + e.Sel.Name
				}
			case *ast.Ident:
				if local[""] != "" && known[local[""]][e.Name] {
					return local[""] + "." + e.Name
				}
			}
			return ""
		}
		inKindFiles := top == "sim" || top == "policies" || top == "kinds"
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if !inKindFiles {
					if k := kindOf(n); k != "" {
						problems = append(problems, rel+": names "+k)
					}
				}
			case *ast.TypeSwitchStmt:
				if top == "kinds" {
					return true
				}
				for _, c := range n.Body.List {
					for _, e := range c.(*ast.CaseClause).List {
						if k := kindOf(e); k != "" {
							problems = append(problems, rel+": switches on the type of a kind ("+k+")")
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(problems)
	for _, p := range slices.Compact(problems) {
		t.Error(p)
	}
}

// docs/architecture.md's table of packages lists, for each, the packages
// of ours its non-test files import; the code must agree.
func TestArchitectureImports(t *testing.T) {
	root := ".."
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z/]+)` \\|.*\\| ([a-z/, ]+) \\|$")
	rows := row.FindAllStringSubmatch(string(doc), -1)
	if len(rows) < 10 {
		t.Fatalf("found %d rows of packages in docs/architecture.md", len(rows))
	}
	for _, r := range rows {
		pkg, listed := r[1], r[2]
		if listed == "all of the above" {
			continue
		}
		var want []string
		if listed != "none" {
			want = strings.Split(listed, ", ")
		}
		got := ourImports(t, filepath.Join(root, pkg))
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("docs/architecture.md: %s imports %v, the table says %v", pkg, got, want)
		}
	}
}

// ourImports returns the packages of this module that the non-test files
// in dir import, sorted, by their path in the module.
func ourImports(t *testing.T, dir string) []string {
	t.Helper()
	const module = "github.com/retrysim/retrysim/"
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no Go files (%v)", dir, err)
	}
	seen := map[string]bool{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p := strings.Trim(imp.Path.Value, `"`); strings.HasPrefix(p, module) {
				seen[strings.TrimPrefix(p, module)] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// walkNonTestGo calls visit with every non-test Go file of the module
// under root (not in testdata or hidden folders), parsed, and its path
// relative to root.
func walkNonTestGo(root string, visit func(rel string, f *ast.File) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		return visit(filepath.ToSlash(rel), f)
	})
}

// A server model or a workload is two files (docs/architecture.md, "Where
// a new capability goes"): its model in sim/ and its registration in
// kinds/. No other non-test file of the module names it: in package sim
// by its name (a type, a conversion, a receiver), anywhere else as
// sim.NAME. Comments do not count, nor a field, method or key that happens
// to share the name.
func TestEveryModelInTwoFiles(t *testing.T) {
	root := ".."
	models := map[string]bool{} // name -> exported (an unexported one is a state, not a kind)
	for name := range typesWithMethods(t, root, map[string][]string{"sim": {"NewServer", "Operations"}})["sim"] {
		models[name] = ast.IsExported(name)
	}
	if n := len(slices.DeleteFunc(slices.Collect(maps.Values(models)), func(e bool) bool { return !e })); n < 12 {
		t.Fatalf("%d server models and workloads found: the guard would prove little", n)
	}
	files := map[string][]string{} // model -> the files that name it
	err := walkNonTestGo(root, func(rel string, f *ast.File) error {
		inSim := f.Name.Name == "sim" && strings.HasPrefix(rel, "sim/")
		simName := ""
		for _, imp := range f.Imports {
			if strings.Trim(imp.Path.Value, `"`) == "github.com/retrysim/retrysim/sim" {
				simName = "sim"
				if imp.Name != nil {
					simName = imp.Name.Name
				}
			}
		}
		named := map[string]bool{}
		// Identifiers that are not references to a type of the package.
		skip := map[*ast.Ident]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && simName != "" && id.Name == simName && models[n.Sel.Name] {
					named[n.Sel.Name] = true
				}
				skip[n.Sel] = true
			case *ast.FuncDecl:
				skip[n.Name] = true
			case *ast.Field:
				for _, id := range n.Names {
					skip[id] = true
				}
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok {
					skip[id] = true
				}
			case *ast.Ident:
				if inSim && models[n.Name] && !skip[n] {
					named[n.Name] = true
				}
			}
			return true
		})
		for m := range named {
			files[m] = append(files[m], rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for m, exported := range models {
		if !exported {
			continue
		}
		if m == "Layered" {
			// A policy's layers (sim.Layer, registered in kinds/layer.go)
			// become Layered wrappers in sim itself, for each run.
			if fs := files[m]; len(fs) != 1 {
				t.Errorf("Layered is named in %v, want sim/server_layer.go alone", fs)
			}
			continue
		}
		if fs := files[m]; len(fs) != 2 {
			t.Errorf("%s is named in %d non-test files, want its model's and its registration's: %v", m, len(fs), fs)
		}
	}
}
