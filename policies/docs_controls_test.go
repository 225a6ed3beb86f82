package policies_test

import (
	"os"
	"regexp"
	"testing"
)

// TestControlsDocNamesExist checks that every policies.X that
// docs/policies.md names is declared, as TestDocsNamesExist does for
// docs/client.md.
func TestControlsDocNamesExist(t *testing.T) {
	doc, err := os.ReadFile("../docs/policies.md")
	if err != nil {
		t.Fatal(err)
	}
	declared := exportedNames(t, ".")
	matches := regexp.MustCompile(`\bpolicies\.([A-Z]\w*)`).FindAllStringSubmatch(string(doc), -1)
	if len(matches) < 10 {
		t.Fatalf("docs/policies.md names only %d things from policies", len(matches))
	}
	for _, m := range matches {
		if !declared[m[1]] {
			t.Errorf("docs/policies.md names policies.%s, which is not declared", m[1])
		}
	}
}
