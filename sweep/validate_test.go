package sweep

import (
	"strings"
	"testing"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/scenarios"
)

// parseAll parses each spec (a Param).
func parseAll(t *testing.T, specs ...string) []Param {
	t.Helper()
	var ps []Param
	for _, spec := range specs {
		p, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

// Every point passes the loader's checks, or the first that does not is
// named with the field: a base above the cap (which only the whole
// policy's check sees), and retries with no wait against a server that
// answers at once, only where both parameters make it so.
func TestValidateChecksEveryPointAsTheLoader(t *testing.T) {
	burst := scenariotest.Builtin(t, "overload-burst")
	if err := Validate(burst, parseAll(t, "base=100ms:8s:100ms", "capacity=1:20:1")); err != nil {
		t.Errorf("points within the caps: %v", err)
	}
	err := Validate(burst, parseAll(t, "base=1h:2h:1h"))
	if want := "base=1h0m0s: policies[1].cap: must be at least base (1h0m0s), got 8s"; err == nil || err.Error() != want {
		t.Errorf("base above the cap: %v, want %q", err, want)
	}

	f, err := scenarios.Parse("x.yaml", []byte(`scenarios:
  - name: s
    server: {response_time: 10ms, phases: [{reject: overloaded}]}
    clients: {count: 5, deadline: 2s}
    policies:
      - {name: immediate, delay: 10ms}
`))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenarios[0]
	if err := Validate(s, parseAll(t, "response_time=0s:20ms:10ms")); err != nil {
		t.Errorf("a zero response time with a wait: %v", err)
	}
	err = Validate(s, parseAll(t, "response_time=0s:20ms:10ms", "delay=0s:10ms:10ms"))
	if want := `response_time=0s delay=0s: policies[0].max_attempts: policy "immediate" retries with no wait`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("no wait against an instant server: %v, want %q…", err, want)
	}
	// A point that cannot be set at all is Apply's error.
	if err := Validate(s, parseAll(t, "clients=1:3:1", "concurrency=2")); err == nil || !strings.HasPrefix(err.Error(), "concurrency=2: ") {
		t.Errorf("a parameter the scenario lacks: %v", err)
	}
}
