package report

import (
	"strings"
	"testing"

	"github.com/retrysim/retrysim/internal/scenariotest"
)

// The HTML set-up table shows each retry control's effective settings,
// defaults filled in: the breaker's thresholds and open time, the budgets'
// and throttles' sizes and rates.
func TestPolicyTableShowsControlSettings(t *testing.T) {
	for _, tt := range []struct{ scenario, policy, want string }{
		{"controls-outage", "breaker", "circuit breaker (opens after 5 failures in a row; open for 10s; 1 probe(s) half-open)"},
		{"metastable-retry-storm", "breaker", "open for 5s"}, // open_for given, the threshold defaulted
		{"controls-outage", "aws-standard", "retry quota of 500 tokens (a retry costs 5, after a timeout 10, after a rejection 5; a first attempt's success refunds 1)"},
		{"controls-outage", "grpc-throttled", "gRPC retry throttling (10 tokens, a failure −1, a success +0.1; retries while above 5)"},
		{"controls-outage", "sre", "adaptive throttling (k 2 over 2m0s); retry budget 10% of requests over 10s, plus 0 a second"},
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
