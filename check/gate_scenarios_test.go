package check

import (
	"path/filepath"
	"testing"

	"github.com/retrysim/retrysim/compare"
	"github.com/retrysim/retrysim/scenarios"
)

// gateSeeds is the seeds of a baseline in the gate's own tests: what
// docs/ci.md recommends recording.
const gateSeeds = 30

// gateScenarios is every built-in scenario and every scenario of
// docs/examples, the ones the gate's promises are tested over. huge-burst
// (1,000,000 clients, about 1.6 s a seed) runs with 10,000 clients: the
// same scenario at a scale that 630 seeds can afford.
func gateScenarios(t *testing.T) []*scenarios.Scenario {
	t.Helper()
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	list := f.Scenarios
	files, err := filepath.Glob("../docs/examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("docs/examples: %v, %d files", err, len(files))
	}
	for _, file := range files {
		g, err := scenarios.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, g.Scenarios...)
	}
	for i, s := range list {
		if s.Name == "huge-burst" {
			if list[i], err = compare.Set(s, []string{"clients=10000"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return list
}
