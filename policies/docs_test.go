package policies_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/internal/docnames"
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

// maxGoDocLines bounds `go doc` of this package: the production client's
// whole surface fits on two screens. A new name for clients takes the
// place of another, or goes to policies/machine.
const maxGoDocLines = 110

func TestGoDocFitsTwoScreens(t *testing.T) {
	out, err := exec.Command("go", "doc", ".").Output()
	if err != nil {
		t.Fatalf("go doc: %v", err)
	}
	lines := strings.Count(string(out), "\n")
	if lines > maxGoDocLines {
		t.Errorf("go doc ./policies is %d lines, more than %d: the production surface grew (docs/architecture.md, two audiences)", lines, maxGoDocLines)
	}
	// The client's entry points are on it.
	for _, name := range []string{"func Do(", "type Transport struct", "type Policy = ", "type Option func", "func WithCoordinator(", "type Pacer = ", "func ClassifyError(", "type Error = ", "type Hooks = "} {
		if !strings.Contains(string(out), name) {
			t.Errorf("go doc ./policies does not show %q", name)
		}
	}
}
