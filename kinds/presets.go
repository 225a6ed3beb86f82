package kinds

import (
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
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
	// Claude Code's retries, measured against 2.1.328 (docs/policies.md:
	// clients/claude-code/probe.mjs and validate --exec). Every status the
	// SDKs retry is retried, a spend-limit 429 too, and x-should-retry
	// decides; a server wait is honoured but never shorter than the
	// backoff (a 2 s retry-after before the third retry waited 2.45 s);
	// one above 60 s ends the turn at once.
	claudeCode := func(m *schema.Mapping, p *sim.Policy) {
		presetBackoff(m, p, policies.AddedJitter{Base: 500 * time.Millisecond, Factor: 2, Cap: 32 * time.Second})
		presetAttempts(m, p, 11)
		if !m.Has("server_wait") {
			p.Rules.FailServerWaitAbove = time.Minute
			p.Rules.AtLeastBackoff = true
		}
		if !m.Has("retry_by") {
			p.Rules.RetryByStatus = true
		}
	}
	registerPreset(&preset{name: "claude-code", backoff: "added-jitter",
		about: "Claude Code 2.1.328 in the foreground: 11 attempts, min(0.5 s·2^n, 32 s) plus up to 25%, a retry-after above 60 s ends the turn; after 3 capacity failures the fallback model, with 11 attempts of its own",
		apply: func(m *schema.Mapping, p *sim.Policy) {
			claudeCode(m, p)
			if !m.Has("fallback") {
				// --fallback-model: the switch comes at once and the
				// retries start again (3 + 11 requests on an always-529
				// server).
				p.Fallback = &sim.Fallback{After: 3, Restart: true}
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
	// LangChain.js: @langchain/core 1.4.0's AsyncCaller retries every call
	// of @langchain/anthropic 1.5.11 and @langchain/openai 1.5.8 (their SDK
	// clients get maxRetries: 0): 6 retries, round(1 s·2^n·U[1, 2)) with no
	// cap (p-retry, utils/p-retry/index.js:29-35); 400-407, 409 and 413
	// end the call (utils/async_caller.js:12-23), and so does a 429
	// without a retry-after or with one above 60 s (:99-127, thrown from
	// the failed-attempt handler :149-160); a retry-after up to 60 s is
	// waited, but never less than the backoff (p-retry :66-68). Files are
	// under node_modules/@langchain/core/dist/.
	registerPreset(&preset{name: "langchain-js", backoff: "doubling-jitter",
		about: "LangChain.js (@langchain/core 1.4.0): 7 attempts, 1 s·2^n·U[1, 2) uncapped, a 429 without retry-after or above 60 s ends the call",
		apply: func(m *schema.Mapping, p *sim.Policy) {
			presetBackoff(m, p, policies.DoublingJitter{Base: time.Second, Factor: 2, Cap: machine.MaxDelay})
			presetAttempts(m, p, 7)
			if !m.Has("server_wait") {
				p.Rules.FailServerWaitAbove = time.Minute
				p.Rules.AtLeastBackoff = true
			}
			if !m.Has("retry_mid_stream") {
				p.Rules.NoMidStreamRetries = true
			}
		}})
	// Vercel's AI SDK: ai 6.0.333 (the newest major for Node 20) with
	// @ai-sdk/anthropic 3.0.140 and @ai-sdk/openai 3.0.141: 2 retries
	// waiting 2 s, then 4 s, no jitter (ai dist/index.mjs:2825-2828, the
	// loop in its @ai-sdk/provider-utils 4.0.67 dist/index.mjs:2917-2980);
	// a retry-after-ms or retry-after below
	// 60 s is waited instead, one above is ignored (ai dist/index.mjs:
	// 2796-2823); 408, 409, 429 and every status >= 500 are retried
	// (@ai-sdk/provider dist/index.mjs:52-55), x-should-retry is not read.
	registerPreset(&preset{name: "vercel-ai-sdk", backoff: "capped-exponential",
		about: "Vercel's AI SDK (ai 6.0.333): 3 attempts, 2 s then 4 s without jitter, a server wait below 60 s honoured, above it ignored",
		apply: func(m *schema.Mapping, p *sim.Policy) {
			presetBackoff(m, p, policies.Exponential{Base: 2 * time.Second, Factor: 2, Cap: machine.MaxDelay})
			presetAttempts(m, p, 3)
			if !m.Has("server_wait") {
				p.Rules.IgnoreServerWaitAbove = time.Minute
			}
			if !m.Has("retry_by") {
				p.Rules.RetryByStatus = true
			}
			if !m.Has("retry_mid_stream") {
				p.Rules.NoMidStreamRetries = true
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
