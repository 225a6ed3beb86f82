package scenarios

import (
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
)

// Presets that reproduce the retry behaviour of real clients. Each is
// plain configuration of the backoffs and controls above; a policy may
// override any of it (a backoff field or backoff: replaces the preset's
// backoff; max_attempts and every control field replace the preset's).
// docs/policies.md gives each preset's source.
func registerClientPresets() {
	registerPreset(&preset{name: "anthropic-sdk", backoff: "sdk-jitter",
		about: "the Anthropic SDKs' defaults: 3 attempts, min(0.5 s·2^n, 8 s) less up to 25%, server waits honoured",
		apply: func(m *mapping, p *sim.Policy) {
			presetBackoff(m, p, policies.SDKJitter{Base: 500 * time.Millisecond, Factor: 2, Cap: 8 * time.Second})
			presetAttempts(m, p, 3)
		}})
	registerPreset(&preset{name: "openai-sdk", backoff: "sdk-jitter",
		about: "the OpenAI SDKs' defaults: as anthropic-sdk, but a server wait above 60 s is ignored",
		apply: func(m *mapping, p *sim.Policy) {
			presetBackoff(m, p, policies.SDKJitter{Base: 500 * time.Millisecond, Factor: 2, Cap: 8 * time.Second})
			presetAttempts(m, p, 3)
			if !m.has("server_wait") {
				p.Rules.IgnoreServerWaitAbove = time.Minute
			}
		}})
	registerPreset(&preset{name: "aws-standard", backoff: "full-jitter", coordinators: []string{"retry_quota"},
		about: "AWS SDK standard mode: 3 attempts, full jitter up to min(1 s·2^n, 20 s), a 500-token retry quota",
		apply: func(m *mapping, p *sim.Policy) {
			presetBackoff(m, p, policies.FullJitter{Base: time.Second, Factor: 2, Cap: 20 * time.Second})
			presetAttempts(m, p, 3)
		}})
	registerPreset(&preset{name: "aws-adaptive", backoff: "full-jitter", coordinators: []string{"retry_quota", "cubic_rate"},
		about: "AWS SDK adaptive mode: standard mode plus the CUBIC client send-rate limiter",
		apply: func(m *mapping, p *sim.Policy) {
			presetBackoff(m, p, policies.FullJitter{Base: time.Second, Factor: 2, Cap: 20 * time.Second})
			presetAttempts(m, p, 3)
		}})
	registerPreset(&preset{name: "grpc-throttled", backoff: "full-jitter", coordinators: []string{"retry_throttling"},
		about: "gRPC retry policy (4 attempts, 0.1 s to 1 s, full jitter) with retry throttling (10 tokens, ratio 0.1)",
		apply: func(m *mapping, p *sim.Policy) {
			presetBackoff(m, p, policies.FullJitter{Base: 100 * time.Millisecond, Factor: 2, Cap: time.Second})
			presetAttempts(m, p, 4)
		}})
	registerPreset(&preset{name: "sre", backoff: "full-jitter", coordinators: []string{"ratio_budget", "adaptive_throttle"},
		about: "Google SRE book: 3 attempts, retries at most 10% of requests, adaptive throttling with k = 2",
		apply: func(m *mapping, p *sim.Policy) {
			presetAttempts(m, p, 3)
			if !m.has("ratio_budget") {
				p.RatioBudget = &policies.RatioBudgetConfig{Percent: 10, MinPerSecond: -1}
			}
		}})
	// The agent CLI's retries, in the foreground and in the background.
	agentCLI := func(m *mapping, p *sim.Policy) {
		presetBackoff(m, p, policies.Exponential{Base: time.Second, Factor: 2, Cap: 32 * time.Second})
		presetAttempts(m, p, 11)
	}
	registerPreset(&preset{name: "agent-cli", backoff: "capped-exponential",
		about: "a long-running agent CLI in the foreground: 11 attempts, 1, 2, 4 … 32 s, the fallback model after 3 capacity failures",
		apply: func(m *mapping, p *sim.Policy) {
			agentCLI(m, p)
			if !m.has("fallback") {
				p.Fallback = &sim.Fallback{After: 3}
			}
		}})
	registerPreset(&preset{name: "agent-cli-background", backoff: "capped-exponential",
		about: "the same agent CLI's background work: 11 attempts, 1, 2, 4 … 32 s, but a capacity failure (529) is not retried",
		apply: func(m *mapping, p *sim.Policy) {
			agentCLI(m, p)
			if !m.has("retry_capacity") {
				p.Rules.NoCapacityRetries = true
			}
		}})
}

// presetBackoff gives p the preset's backoff unless the policy chose its
// own (a backoff field, or base, factor or cap).
func presetBackoff(m *mapping, p *sim.Policy, b policies.Backoff) {
	for _, f := range append([]string{"backoff"}, backoffFields()...) {
		if m.has(f) {
			return
		}
	}
	p.Rules.Backoff = b
}

// presetAttempts gives p the preset's attempts unless the policy set
// max_attempts itself.
func presetAttempts(m *mapping, p *sim.Policy, n int) {
	if !m.has("max_attempts") {
		p.Rules.MaxAttempts = n
	}
}
