package serve_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/serve"
)

// Agent sessions: each call starts when the session's previous call
// ended (plus a think time), and a call that gives up is repeated. The
// real run, told of each real end, makes the same calls as the
// simulation: on fake time every metric, the sessions' counts included,
// equals the simulator's.
const sessionsScenario = `
scenarios:
  - name: sessions
    seed: 3
    server:
      response_time: 100ms
      phases:
        - {duration: 1s, reject: overloaded}
        - {admit: 4, window: 1s, reject: overloaded}
    clients:
      type: agent-sessions
      sessions: 6
      turns: 4
      think: 300ms
      spread: 2s
      resume: turn
      pause: 1s
      max_repeats: 1
    policies:
      - name: capped-exponential
        base: 300ms
        cap: 2s
        max_attempts: 3
      - name: full-jitter
        base: 300ms
        cap: 2s
        max_attempts: 3
`

func TestValidateAgentSessionsOnFakeTime(t *testing.T) {
	f, err := scenarios.Parse("sessions.yaml", []byte(sessionsScenario))
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		cs := validateInMemory(t, f.Scenarios[0])
		var failed, resumed int64
		for _, c := range cs {
			sessions := 0
			for _, ch := range c.Checks {
				if strings.HasPrefix(ch.Metric, "sessions.") {
					sessions++
				}
				if ch.Simulated != ch.Measured {
					t.Errorf("%s %s: simulated %v, measured %v", c.Policy, ch.Metric, ch.Simulated, ch.Measured)
				}
			}
			// started, completed, failed, resumed, turns_repeated
			if sessions != 5 {
				t.Errorf("%s: %d checks of the sessions' counts, want 5", c.Policy, sessions)
			}
			nf, _ := c.Simulated.Counters.Get("sessions.failed")
			nr, _ := c.Simulated.Counters.Get("sessions.resumed")
			failed, resumed = failed+nf, resumed+nr
		}
		// The scenario must exercise the chain: repeats and a failed session.
		if failed == 0 || resumed == 0 {
			t.Errorf("%d sessions failed and %d calls were repeated over the policies; the test wants both", failed, resumed)
		}
		if t.Failed() {
			t.Logf("\n%s", report(t, cs))
		}
	})
}

// validateInMemory validates s at speed 1 over an in-memory transport
// (inside a synctest bubble: on fake time).
func validateInMemory(t *testing.T, s *scenarios.Scenario) []serve.Comparison {
	t.Helper()
	v := validation(s, 1)
	v.Connect = inMemory
	cs, err := serve.Validate(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
