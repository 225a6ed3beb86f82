package kinds

import (
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

// Presets that reproduce the retry behaviour of real clients. Each is
// plain configuration of the backoffs and controls above; a policy may
// override any of it (a backoff field or backoff: replaces the preset's
// backoff; max_attempts and every control field replace the preset's).
// docs/policies.md gives each preset's source.
func registerClientPresets() {
	// The official SDKs: 2 retries, min(0.5 s·2^n, 8 s) less up to 25%, the
	// status rule, mid-stream errors raised to the caller; each its own
	// server-wait rule (wait: nil honours every wait).
	sdk := func(name, about string, wait func(r *policies.Policy)) {
		registerPreset(&preset{name: name, backoff: "sdk-jitter", about: about,
			apply: func(m *schema.Mapping, p *sim.Policy) {
				presetBackoff(m, p, policies.SDKJitter{Base: 500 * time.Millisecond, Factor: 2, Cap: 8 * time.Second})
				presetAttempts(m, p, 3)
				if !m.Has("retry_by") {
					p.Rules.RetryByStatus = true
				}
				if !m.Has("retry_mid_stream") {
					p.Rules.NoMidStreamRetries = true
				}
				if wait != nil && !m.Has("server_wait") {
					wait(&p.Rules)
				}
			}})
	}
	sdk("anthropic-sdk-go", "anthropic-sdk-go v2.15.0: 3 attempts, min(0.5 s·2^n, 8 s) less up to 25%, every server wait honoured", nil)
	sdk("anthropic-sdk-python", "anthropic-sdk-python 0.121.0: as anthropic-sdk-go, but a server wait above 60 s is ignored (the backoff decides)",
		func(r *policies.Policy) { r.IgnoreServerWaitAbove = time.Minute })
	sdk("anthropic-sdk-typescript", "npm @anthropic-ai/sdk 1.15.0: as anthropic-sdk-go, but a server wait above 2^31-1 ms is ignored",
		func(r *policies.Policy) { r.IgnoreServerWaitAbove = (1<<31 - 1) * time.Millisecond })
	sdk("openai-python", "openai-python 3.3.1: as anthropic-sdk-go, but a server wait above 120 s ends the call",
		func(r *policies.Policy) { r.FailServerWaitAbove = 2 * time.Minute })
	sdk("openai-go", "openai-go v3.100.0: as openai-python (a server wait above 2 min ends the call)",
		func(r *policies.Policy) { r.FailServerWaitAbove = 2 * time.Minute })
	sdk("openai-node", "npm openai 6.49.0 (the newest for Node 20): as anthropic-sdk-go, every server wait honoured", nil)
	// AWS SDK for Go v2 before v1.48.0 (the schedule most deployed code
	// still runs): attempt n waits U[0, min(2^n s, 20 s)), so retry 0 draws
	// from [0, 2 s); the retryer reads no server wait.
	aws := func(m *schema.Mapping, p *sim.Policy, quota policies.RetryQuotaConfig) {
		presetBackoff(m, p, policies.FullJitter{Base: 2 * time.Second, Factor: 2, Cap: 20 * time.Second})
		presetAttempts(m, p, 3)
		if !m.Has("server_wait") {
			p.Rules.IgnoreServerWaitAbove = time.Nanosecond
		}
		if !m.Has("retry_quota") {
			setSpec(p, quota)
		}
	}
	registerPreset(&preset{name: "aws-standard", backoff: "full-jitter", coordinators: []string{"retry_quota"},
		about: "aws-sdk-go-v2 v1.47.8 standard mode: 3 attempts, full jitter up to min(2 s·2^n, 20 s), no server wait read, a 500-token retry quota",
		apply: func(m *schema.Mapping, p *sim.Policy) {
			aws(m, p, policies.RetryQuotaConfig{RefundEverySuccess: true})
		}})
	registerPreset(&preset{name: "aws-adaptive", backoff: "full-jitter", coordinators: []string{"retry_quota", "cubic_rate"},
		about: "aws-sdk-go-v2 v1.47.8 adaptive mode: standard mode plus the CUBIC client send-rate limiter, and no refund for successes",
		apply: func(m *schema.Mapping, p *sim.Policy) {
			aws(m, p, policies.RetryQuotaConfig{SuccessRefund: -1})
		}})
	registerPreset(&preset{name: "grpc-throttled", backoff: "grpc-jitter", coordinators: []string{"retry_throttling"},
		about: "grpc-go v1.85.0 with gRFC A6's example policy (4 attempts, min(0.1 s·2^n, 1 s)·U[0.8, 1.2)) and retry throttling (10 tokens, ratio 0.1)",
		apply: func(m *schema.Mapping, p *sim.Policy) {
			presetBackoff(m, p, policies.GRPCJitter{Base: 100 * time.Millisecond, Factor: 2, Cap: time.Second})
			presetAttempts(m, p, 4)
		}})
	registerPreset(&preset{name: "sre", backoff: "full-jitter", coordinators: []string{"ratio_budget", "adaptive_throttle"},
		about: "Google SRE book: 3 attempts, retries at most 10% of requests, adaptive throttling with k = 2",
		apply: func(m *schema.Mapping, p *sim.Policy) {
			presetAttempts(m, p, 3)
			if !m.Has("ratio_budget") {
				setSpec(p, policies.RatioBudgetConfig{Percent: 10, MinPerSecond: -1, CountRetries: true})
			}
		}})
	// Claude Code's retries, in the foreground and in the background.
	claudeCode := func(m *schema.Mapping, p *sim.Policy) {
		presetBackoff(m, p, policies.AddedJitter{Base: 500 * time.Millisecond, Factor: 2, Cap: 32 * time.Second})
		presetAttempts(m, p, 11)
		if !m.Has("server_wait") {
			p.Rules.FailServerWaitAbove = time.Minute
		}
	}
	registerPreset(&preset{name: "claude-code", backoff: "added-jitter",
		about: "Claude Code in the foreground: 11 attempts, min(0.5 s·2^n, 32 s) plus up to 25%, a retry-after above 60 s ends the turn, the fallback model after 3 capacity failures",
		apply: func(m *schema.Mapping, p *sim.Policy) {
			claudeCode(m, p)
			if !m.Has("fallback") {
				p.Fallback = &sim.Fallback{After: 3}
			}
		}})
	registerPreset(&preset{name: "claude-code-background", backoff: "added-jitter",
		about: "Claude Code's background work: as claude-code, but a capacity failure (529) is not retried and there is no fallback",
		apply: func(m *schema.Mapping, p *sim.Policy) {
			claudeCode(m, p)
			if !m.Has("retry_capacity") {
				p.Rules.NoCapacityRetries = true
			}
		}})
	// The names of earlier releases.
	alias("anthropic-sdk", "anthropic-sdk-go")
	alias("openai-sdk", "openai-python")
	alias("agent-cli", "claude-code")
	alias("agent-cli-background", "claude-code-background")
}

// alias registers name as another name of the preset of.
func alias(name, of string) {
	p := *lookupPreset(of)
	p.name, p.about = name, "the same as "+of
	registerPreset(&p)
}

// presetBackoff gives p the preset's backoff unless the policy chose its
// own (a backoff field, or base, factor or cap).
func presetBackoff(m *schema.Mapping, p *sim.Policy, b policies.Backoff) {
	for _, f := range append([]string{"backoff"}, backoffFields()...) {
		if m.Has(f) {
			return
		}
	}
	p.Rules.Backoff = b
}

// presetAttempts gives p the preset's attempts unless the policy set
// max_attempts itself.
func presetAttempts(m *schema.Mapping, p *sim.Policy, n int) {
	if !m.Has("max_attempts") {
		p.Rules.MaxAttempts = n
	}
}
