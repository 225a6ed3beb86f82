package scenarios

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// The AWS, gRPC and SRE presets carry the constants of the client versions
// docs/policies.md cites (its "Sources" tables).
func TestPresetsFollowTheirSources(t *testing.T) {
	src := strings.Replace(valid, "      - name: immediate\n", `      - name: aws-standard
      - name: aws-adaptive
      - name: grpc-throttled
      - name: sre
`, 1)
	f, err := Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ps := f.Scenarios[0].Policies
	// aws-sdk-go-v2 v1.47.8: attempt n (1 for the first retry) waits
	// U[0, 2^n s) up to 20 s, so retry 0 draws from [0, 2 s); no header is read.
	for _, p := range ps[:2] {
		if want := (policies.FullJitter{Base: 2 * time.Second, Factor: 2, Cap: 20 * time.Second}); p.Rules.Backoff != want {
			t.Errorf("%s: backoff %v, want %v", p.Name, p.Rules.Backoff, want)
		}
		if p.Rules.MaxAttempts != 3 || p.Rules.IgnoreServerWaitAbove != time.Nanosecond {
			t.Errorf("%s: %d attempts, server waits ignored above %v; want 3 and 1ns (none read)", p.Name, p.Rules.MaxAttempts, p.Rules.IgnoreServerWaitAbove)
		}
	}
	// The standard retryer's attempt token adds 1 after every successful
	// attempt; adaptive mode's never does.
	if q, _ := specOf[policies.RetryQuotaConfig](&ps[0]); !reflect.DeepEqual(q, policies.RetryQuotaConfig{RefundEverySuccess: true}) {
		t.Errorf("aws-standard quota %+v", q)
	}
	if q, _ := specOf[policies.RetryQuotaConfig](&ps[1]); !reflect.DeepEqual(q, policies.RetryQuotaConfig{SuccessRefund: -1}) {
		t.Errorf("aws-adaptive quota %+v", q)
	}
	// grpc-go v1.85.0 (gRFC A6 as updated in 2024): min(0.1 s·2^n, 1 s)·U[0.8, 1.2).
	g := ps[2]
	if want := (policies.GRPCJitter{Base: 100 * time.Millisecond, Factor: 2, Cap: time.Second}); g.Rules.Backoff != want || g.Rules.MaxAttempts != 4 {
		t.Errorf("grpc-throttled: backoff %v, %d attempts; want %v, 4", g.Rules.Backoff, g.Rules.MaxAttempts, want)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for retry, ceiling := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second} {
		lo, hi := ceiling*4/5, ceiling*6/5
		for range 200 {
			if d := g.Rules.Backoff.Delay(retry, 0, rng); d < lo || d >= hi {
				t.Fatalf("grpc-throttled retry %d waits %v, outside [%v, %v)", retry, d, lo, hi)
			}
		}
	}
	// The SRE book: retries below 10% of all requests, retries included.
	if b, _ := specOf[policies.RatioBudgetConfig](&ps[3]); !reflect.DeepEqual(b, policies.RatioBudgetConfig{Percent: 10, MinPerSecond: -1, CountRetries: true}) || ps[3].Rules.MaxAttempts != 3 {
		t.Errorf("sre: ratio budget %+v, %d attempts", b, ps[3].Rules.MaxAttempts)
	}
}

// LangChain.js and Vercel's AI SDK wait as docs/policies.md cites them:
// LangChain's p-retry round(1 s·2^n·U[1, 2)) with no cap, the AI SDK 2 s
// then 4 s exactly; Claude Code's fallback restarts its retries.
func TestAgentFrameworkPresetsFollowTheirSources(t *testing.T) {
	src := strings.Replace(valid, "      - name: immediate\n", "      - name: langchain-js\n      - name: vercel-ai-sdk\n      - name: claude-code\n", 1)
	f, err := Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	lc, ai, cc := f.Scenarios[0].Policies[0], f.Scenarios[0].Policies[1], f.Scenarios[0].Policies[2]
	rng := rand.New(rand.NewPCG(1, 2))
	for retry := range 6 {
		ceiling := time.Second << retry
		var lo, hi time.Duration = 1 << 62, 0
		for range 500 {
			d := lc.Rules.Backoff.Delay(retry, 0, rng)
			lo, hi = min(lo, d), max(hi, d)
		}
		// Every draw in [ceiling, 2·ceiling), and the draws reach across it.
		if lo < ceiling || hi >= 2*ceiling || hi-lo < ceiling*9/10 {
			t.Errorf("langchain-js retry %d: waits from %v to %v, want spread over [%v, %v)", retry, lo, hi, ceiling, 2*ceiling)
		}
	}
	if lc.Rules.MaxAttempts != 7 {
		t.Errorf("langchain-js: %d attempts, want 7 (6 retries)", lc.Rules.MaxAttempts)
	}
	for retry, want := range []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second} {
		if d := ai.Rules.Backoff.Delay(retry, 0, rng); d != want {
			t.Errorf("vercel-ai-sdk retry %d waits %v, want %v", retry, d, want)
		}
	}
	if ai.Rules.MaxAttempts != 3 {
		t.Errorf("vercel-ai-sdk: %d attempts, want 3", ai.Rules.MaxAttempts)
	}
	if fb := cc.Fallback; fb == nil || fb.After != 3 || !fb.Restart {
		t.Errorf("claude-code fallback %+v, want after 3 with the retries restarted", fb)
	}
}
