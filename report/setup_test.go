package report

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// The HTML set-up table shows each retry control's effective settings,
// defaults filled in: the breaker's thresholds and open time, the budgets'
// and throttles' sizes and rates.
func TestPolicyTableShowsControlSettings(t *testing.T) {
	for _, tt := range []struct{ scenario, policy, want string }{
		{"controls-outage", "breaker", "circuit breaker (opens after 5 failures in a row; open for 10s; 1 probe(s) half-open)"},
		{"metastable-retry-storm", "breaker", "open for 5s"}, // open_for given, the threshold defaulted
		{"controls-outage", "aws-standard", "retry quota of 500 tokens (a retry costs 5, after a timeout 10, after a rejection 5; every success refunds 1)"},
		{"controls-outage", "grpc-throttled", "gRPC retry throttling (10 tokens, a failure −1, a success +0.1; retries while above 5)"},
		{"controls-outage", "sre", "adaptive throttling (k 2 over 2m0s); retry budget 10% of requests, retries included, over 10s, plus 0 a second"},
	} {
		found := false
		for _, row := range policyTable(scenariotest.Builtin(t, tt.scenario)).Rows {
			if row[0] != tt.policy {
				continue
			}
			found = true
			if got := row[len(row)-1]; !strings.Contains(got, tt.want) {
				t.Errorf("%s/%s: coordination %q, want it to contain %q", tt.scenario, tt.policy, got, tt.want)
			}
		}
		if !found {
			t.Errorf("%s: no policy %s", tt.scenario, tt.policy)
		}
	}
}

// Single-seed markdown opens with the trade summary, as the multi-seed
// markdown and the HTML report do: per policy, completions of operations,
// attempts per completion, give-ups by reason, p50/p99 of the completed,
// against the reference (the first policy that completes, or Ref). The
// table format stays one table.
func TestSingleSeedMarkdownTrade(t *testing.T) {
	results := []sim.Result{
		{Policy: "none", Clients: 10, Attempts: 30, GaveUp: 10, GaveUpBy: giveUps(policies.StopAttempts, 10)},
		{Policy: "some", Clients: 10, Attempts: 20, Completed: 8, GaveUp: 2, GaveUpBy: giveUps(policies.StopDeadline, 2),
			Latencies: []time.Duration{time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second, 3 * time.Second}},
	}
	for _, tt := range []struct {
		ref  int
		want []string
	}{
		{DefaultReference, []string{"#### The trade, per policy (means per run over seed 4; p50 and p99 over completed operations only; vs some)",
			"| none   |  0 of 10 (0%) |", "attempts=10", "| some   | 8 of 10 (80%) |                2.50 | deadline=2", "| reference", "#### Results, seed 4"}},
		{0, []string{"vs none)", "| none   |  0 of 10 (0%) |                   - | attempts=10        |      - |      - | reference"}},
	} {
		c := Comparison{Scenario: "s", Seed: 4, Results: results, Ref: tt.ref}
		var md, table bytes.Buffer
		if err := Write(&md, Markdown, &c); err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(md.String(), w) {
				t.Errorf("ref %d: markdown lacks %q:\n%s", tt.ref, w, md.String())
			}
		}
		if err := Write(&table, Table, &c); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(table.String(), "trade") {
			t.Errorf("the table format has a trade summary:\n%s", table.String())
		}
	}
}

func giveUps(reason policies.StopReason, n int) (by [machine.NumStopReasons]int) {
	by[reason] = n
	return by
}

// The set-up table words every server-wait rule, the total cap included.
func TestServerWaitsWorded(t *testing.T) {
	for _, tt := range []struct {
		rules policies.Policy
		want  string
	}{
		{policies.Policy{}, "honoured, uncapped"},
		{policies.Policy{IgnoreServerWaitAbove: time.Minute}, "honoured up to 1m0s, its own backoff above"},
		{policies.Policy{ClampServerWait: 8 * time.Second}, "honoured, clamped to 8s"},
		{policies.Policy{FailServerWaitAbove: 2 * time.Minute}, "honoured up to 2m0s, gives up above"},
		{policies.Policy{TotalServerWaitCap: time.Minute}, "honoured, uncapped; gives up past 1m0s of server waits in all"},
	} {
		p := sim.Policy{Rules: tt.rules}
		if got := serverWaits(&p); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.rules, got, tt.want)
		}
	}
}

// The report's words for each policy type's server waits match what it
// does with them: a type that reads no server wait (the aws presets) is
// not described as honouring one, and one that reads them is. Reading is
// judged by its decisions: a 429 with a retry-after of 1ms to 1h, against
// the same 429 without one, on the same random draws.
func TestServerWaitsWordedForEveryPolicyType(t *testing.T) {
	waits := []time.Duration{time.Millisecond, time.Second, 30 * time.Second, 5 * time.Minute, time.Hour}
	readNone := map[string]bool{}
	for _, pt := range kinds.PolicyTypes() {
		src := "scenarios:\n  - name: s\n    server: {phases: [{reject: rate-limited}]}\n    clients: {count: 1, deadline: 2h}\n    policies:\n      - {name: p, type: " + pt.Name + "}\n"
		f, err := scenarios.Parse("types.yaml", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", pt.Name, err)
		}
		p := &f.Scenarios[0].Policies[0]
		decide := func(w time.Duration) machine.Decision {
			out := policies.Outcome{Class: policies.RetryAfter, Status: 429, ServerWait: w}
			return p.Rules.Next(1, 0, 0, out, rand.New(rand.NewPCG(1, 2)))
		}
		none := decide(0)
		reads := false
		for _, w := range waits {
			if d := decide(w); d.Stop != none.Stop || d.Delay != none.Delay {
				reads = true
			}
		}
		readNone[pt.Name] = !reads
		words := serverWaits(p)
		if honours := strings.Contains(words, "honoured") || strings.Contains(words, "floor"); honours != reads {
			t.Errorf("%s reads server waits: %v, but the report says %q", pt.Name, reads, words)
		}
	}
	if !readNone["aws-standard"] || !readNone["aws-adaptive"] || readNone["anthropic-sdk-go"] {
		t.Errorf("types that read no server wait: %v; want the aws presets and not anthropic-sdk-go", readNone)
	}
}
