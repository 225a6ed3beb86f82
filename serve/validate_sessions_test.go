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
	f, err := scenarios.Parse("sessions.yaml", []byte(sessionsScenario+tokensScenario))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Scenarios {
		t.Run(s.Name, func(t *testing.T) { validateSessions(t, s) })
	}
}

// tokensScenario sizes the calls: the sessions' conversations grow into a
// key's limit of input tokens per minute, the only limit that binds (its
// requests' limit is ten times what they send), so its 429s show that
// the real requests carried their sizes. No two events share an instant
// (random response and think times, spread starts): on fake time, calls
// that arrive at the same instant reach the key in the order the
// goroutines run, not in the simulator's order of events.
const tokensScenario = `
  - name: tokens
    seed: 2
    server:
      type: rate-limit
      requests_per_minute: 600
      input_tokens_per_minute: 40000
      retry_after_unit: 1s
      inner:
        response_time: {uniform: [400ms, 600ms]}
        phases:
          - {admit: 1000, window: 1s}
    clients:
      type: agent-sessions
      sessions: 5
      turns: 6
      think: {exponential: 300ms}
      spread: 3s
      input_tokens: 2000
      input_growth: 1500
      resume: turn
      pause: 2s
      max_repeats: 1
    policies:
      - name: full-jitter
        base: 1s
        cap: 10s
        max_attempts: 4
`

func validateSessions(t *testing.T, s *scenarios.Scenario) {
	synctest.Test(t, func(t *testing.T) {
		cs := validateInMemory(t, s)
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
		// The scenarios must exercise the chain (repeats, and in the first
		// a failed session) and, in the second, the key's token limit.
		switch {
		case resumed == 0, s.Name == "sessions" && failed == 0:
			t.Errorf("%d sessions failed and %d calls were repeated over the policies; the test wants both", failed, resumed)
		case s.Name == "tokens" && cs[0].Simulated.Rejected == 0:
			t.Errorf("no call met the key's token limit")
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
