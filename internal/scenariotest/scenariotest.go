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

// GateYAML is the scenario file of the multi-seed gate's tests: 50 clients
// against a server that fails 60 % of calls at random, with one full-jitter
// policy of the given base, so that latencies are the waits between
// attempts and grow with the base.
func GateYAML(base string) string {
	return `scenarios:
  - name: gate
    server:
      type: error-mix
      response_time: 100ms
      failures:
        - {probability: 0.6, reject: overloaded}
    clients: {count: 50, max_attempts: 8, deadline: 30s}
    policies:
      - {name: full-jitter, base: ` + base + `, cap: 8s}
`
}
