// Package scenariotest gives tests the built-in scenarios.
package scenariotest

import (
	"testing"

	"github.com/retrysim/retrysim/scenarios"
)

// Builtin returns the built-in scenario called name ("" for the default
// one), failing t if there is none.
func Builtin(t testing.TB, name string) *scenarios.Scenario {
	t.Helper()
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if name == "" {
		name = f.Default
	}
	s, err := f.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
