package policies_test

import (
	"os"
	"regexp"
	"testing"
)

// TestControlsDocNamesExist checks that every policies.X and machine.X
// that docs/policies.md names is declared, as TestDocsNamesExist does for
// docs/client.md.
func TestControlsDocNamesExist(t *testing.T) {
	doc, err := os.ReadFile("../docs/policies.md")
	if err != nil {
		t.Fatal(err)
	}
	for pkg, dir := range map[string]string{"policies": ".", "machine": "machine"} {
		declared := exportedNames(t, dir)
		matches := regexp.MustCompile(`\b`+pkg+`\.([A-Z]\w*)`).FindAllStringSubmatch(string(doc), -1)
		if len(matches) < 10 {
			t.Errorf("docs/policies.md names only %d things from %s", len(matches), pkg)
		}
		for _, m := range matches {
			if !declared[m[1]] {
				t.Errorf("docs/policies.md names %s.%s, which is not declared", pkg, m[1])
			}
		}
	}
}
