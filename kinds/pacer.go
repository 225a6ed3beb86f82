package kinds

import (
	"fmt"
	"strings"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/schema"
)

// The controls that read a key's rate-limit headers (policies.Pacer,
// policies.ResetGate): registered after every other coordinator, so that
// they are asked last (what the pacer takes for a request is not given
// back if a later coordinator holds it).
func registerPacer() {
	registerControl("reset_gate", "a sleep-until-reset gate", "reset_gate: {} holds every client after a 429 until the key's limits reset, as the rate-limit headers tell it (the naive pacing)",
		false,
		func(*schema.Mapping) policies.ResetGateConfig { return policies.ResetGateConfig{} },
		func(policies.ResetGateConfig) string { return "sleep until the limits reset after a 429 (shared)" })
	registerControl("pacer", "a rate-limit pacer", "pacer: {tokens, input_tokens, output_tokens, window} spaces every client's requests by the key's rate-limit headers so that remaining never reaches 0",
		false,
		func(m *schema.Mapping) policies.PacerConfig {
			return policies.PacerConfig{
				Tokens:       m.Boolean("tokens", false),
				InputTokens:  int(m.Integer("input_tokens", 0, 0, 1<<31-1)),
				OutputTokens: int(m.Integer("output_tokens", 0, 0, 1<<31-1)),
				Window:       m.Duration("window", 0),
			}
		},
		func(c policies.PacerConfig) string {
			by := []string{"requests"}
			if c.Tokens {
				by = append(by, fmt.Sprintf("tokens (a request without a size: %d in, %d out)", c.InputTokens, c.OutputTokens))
			}
			return "rate-limit pacer by the headers' " + strings.Join(by, " and ")
		})
	// Both read the key's headers, and the key scales with the clients.
	setScale("reset_gate", scaleFree)
	setScale("pacer", scaleFree)
}
