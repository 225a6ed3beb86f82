package docnames

import (
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestArchitectureExportCounts holds docs/architecture.md's table of
// exported names to the code: one row per package of the module (its
// folder, "." for the module's root), with the number of exported
// top-level names (constants, variables, types, functions; not methods)
// its non-test files declare.
func TestArchitectureExportCounts(t *testing.T) {
	const root = "../.."
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z/.]+)` \\| ([0-9]+) \\|")
	listed := map[string]int{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		n, _ := strconv.Atoi(m[2])
		listed[m[1]] = n
	}
	if len(listed) < 20 {
		t.Fatalf("docs/architecture.md: found %d rows of exported names, want one per package", len(listed))
	}
	counted := map[string]int{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if n := d.Name(); path != root && (n == "testdata" || n == "node_modules" || strings.HasPrefix(n, ".")) {
			return filepath.SkipDir
		}
		files, _ := filepath.Glob(filepath.Join(path, "*.go"))
		if !slices.ContainsFunc(files, func(f string) bool { return !strings.HasSuffix(f, "_test.go") }) {
			return nil
		}
		names, err := Declared(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for name := range names {
			if token.IsExported(name) {
				counted[filepath.ToSlash(rel)]++
			}
		}
		if counted[filepath.ToSlash(rel)] == 0 {
			counted[filepath.ToSlash(rel)] = 0
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg, n := range counted {
		if m, ok := listed[pkg]; !ok {
			t.Errorf("docs/architecture.md: no row for package %s (%d exported names): add \"| `%s` | %d |\"", pkg, n, pkg, n)
		} else if m != n {
			t.Errorf("docs/architecture.md: %s exports %d names, the table says %d", pkg, n, m)
		}
	}
	for pkg := range listed {
		if _, ok := counted[pkg]; !ok {
			t.Errorf("docs/architecture.md: a row for %s, which is not a package of the module", pkg)
		}
	}
}
