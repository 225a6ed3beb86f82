package policies_test

import (
	"github.com/retrysim/retrysim/internal/docnames"
	"os"
	"regexp"
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

func exportedNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	names, err := docnames.Declared(dir)
	if err != nil {
		t.Fatal(err)
	}
	return names
}
