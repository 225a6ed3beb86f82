package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
)

// instant is a file whose only policy retries with no wait, bounded by a
// deadline alone, against a server that answers at once: its time would
// never pass (the engine stops it when it stalls).
const instant = `scenarios:
  - name: s
    server:
      response_time: 0s
      phases:
        - reject: overloaded
    clients:
      count: 5
      deadline: 2s
    policies:
      - name: immediate
        delay: 0s
`

func TestLoaderRefusesRetriesThatTakeNoTime(t *testing.T) {
	_, err := Parse("x.yaml", []byte(instant))
	if want := `x.yaml:11:9: scenarios[0].policies[0].max_attempts: policy "immediate" retries with no wait against a server that answers every request at once`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want one containing %q", err, want)
	}
	// Anything that lets time pass, or bounds the attempts, is accepted.
	for _, change := range [][2]string{
		{"deadline: 2s", "max_attempts: 3"},
		{"response_time: 0s", "response_time: 1ms"},
		{"delay: 0s", "delay: 1ms"},
		{"reject: overloaded", "reject: rate-limited"}, // a retry-after to wait
		{"delay: 0s", "delay: 0s\n        throttle: {rate: 10}"},
		{"delay: 0s", "delay: 0s\n        retry_quota: {}"}, // a run of refusals spends the tokens
		{"delay: 0s", "delay: 0s\n        breaker: {consecutive_failures: 5}"},
	} {
		src := strings.Replace(instant, change[0], change[1], 1)
		if _, err := Parse("x.yaml", []byte(src)); err != nil {
			t.Errorf("%s → %s: %v", change[0], change[1], err)
		}
	}
}

// An error mix in which some requests succeed ends every operation even
// at one instant (with probability 1): accepted, and it runs. Only a phase
// that fails every request is refused.
func TestLoaderAcceptsInstantRetriesThatCanSucceed(t *testing.T) {
	mix := func(p string) string {
		return `scenarios:
  - name: s
    server:
      type: error-mix
      response_time: 0s
      failures:
        - {probability: ` + p + `, reject: overloaded}
    clients: {count: 20, deadline: 10s}
    policies:
      - {name: immediate, delay: 0s}
`
	}
	f, err := Parse("x.yaml", []byte(mix("0.1")))
	if err != nil {
		t.Fatalf("10%% failures: %v", err)
	}
	s := f.Scenarios[0]
	res, err := sim.Run(s.Config(0, 1))
	if err != nil || res.Completed != 20 {
		t.Fatalf("10%% failures: %d completed, %v; want all 20", res.Completed, err)
	}
	if _, err := Parse("x.yaml", []byte(mix("1"))); err == nil || !strings.Contains(err.Error(), "virtual time would never pass") {
		t.Fatalf("every request fails: err = %v, want the refusal", err)
	}
}

// Validate refuses what the loader refuses in a scenario changed after
// loading, naming the field; the built-in scenarios pass.
func TestValidateChecksAsTheLoaderDoes(t *testing.T) {
	f, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Scenarios {
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
	}
	load := func() *Scenario {
		f, err := Parse("x.yaml", []byte(valid))
		if err != nil {
			t.Fatal(err)
		}
		return f.Scenarios[0]
	}
	for _, tt := range []struct {
		name   string
		change func(s *Scenario)
		want   string
	}{
		{"base above the cap", func(s *Scenario) {
			s.Policies[1].Rules.Backoff = policies.FullJitter{Base: 2 * time.Hour, Factor: 2, Cap: time.Hour}
		}, "policies[1].cap: must be at least base (2h0m0s), got 1h0m0s"},
		{"no wait against an instant server", func(s *Scenario) {
			s.Server.(*sim.CapacityWindows).ResponseTime = sim.Fixed(0)
			s.Policies[0].Rules.MaxAttempts = 0
			s.Policies[0].Rules.Backoff = policies.Constant{}
		}, `policies[0].max_attempts: policy "immediate" retries with no wait`},
		{"a server the model refuses", func(s *Scenario) {
			s.Server.(*sim.CapacityWindows).Phases = nil
		}, "server: server needs at least one phase"},
		{"too many operations", func(s *Scenario) {
			s.Workload = sim.Burst{Clients: kinds.MaxClients + 1}
		}, "clients: the workload may start"},
	} {
		s := load()
		if err := s.Validate(); err != nil {
			t.Fatalf("%s: unchanged: %v", tt.name, err)
		}
		tt.change(s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}
