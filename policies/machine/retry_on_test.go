package machine

import (
	"math/rand/v2"
	"testing"
	"time"
)

func mustStatuses(t *testing.T, codes ...int) StatusSet {
	t.Helper()
	s, err := Statuses(codes...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A retry_on rule retries only what it lists, by status or by class, and
// replaces the class and status rules; the mid-stream and capacity rules
// still stop what they stop.
func TestRetryOnRule(t *testing.T) {
	back := Constant{Wait: time.Second}
	istio := Policy{Backoff: back, RetryOn: RetryOn{Statuses: mustStatuses(t, 503)}}
	capacity := Policy{Backoff: back, RetryOn: RetryOn{Classes: Classes(Capacity)}}
	transient := Policy{Backoff: back, RetryOn: RetryOn{Statuses: mustStatuses(t, 429), Classes: Classes(Transient)}}
	overSDK := Policy{Backoff: back, RetryByStatus: true, RetryOn: RetryOn{Statuses: mustStatuses(t, 503)}}
	noMidStream := Policy{Backoff: back, NoMidStreamRetries: true, RetryOn: RetryOn{Classes: Classes(Capacity)}}
	noCapacity := Policy{Backoff: back, NoCapacityRetries: true, RetryOn: RetryOn{Statuses: mustStatuses(t, 503, 500)}}
	spend, midStream := spendLimited(), midStreamOverload()
	checkRules(t, []ruleCase{
		{"503 listed: 503 retried", istio, ClassifyResponse(503, nil, nil, now), true},
		{"503 listed: 529 passed back", istio, ClassifyResponse(529, nil, nil, now), false},
		{"503 listed: 500 passed back", istio, ClassifyResponse(500, nil, nil, now), false},
		{"503 listed: 429 passed back", istio, ClassifyResponse(429, nil, nil, now), false},
		{"503 listed: a timeout (no status) passed back", istio, Outcome{Class: Transient}, false},
		{"503 listed: a mid-stream overload (status 200) passed back", istio, midStream, false},
		{"503 listed: x-should-retry is not read", istio, ClassifyResponse(503, hdr("x-should-retry", "false"), nil, now), true},
		{"capacity listed: 529 retried", capacity, ClassifyResponse(529, nil, nil, now), true},
		{"capacity listed: 503 retried", capacity, ClassifyResponse(503, nil, nil, now), true},
		{"capacity listed: a mid-stream overload retried", capacity, midStream, true},
		{"capacity listed: 500 passed back", capacity, ClassifyResponse(500, nil, nil, now), false},
		{"capacity listed: 429 passed back", capacity, ClassifyResponse(429, nil, nil, now), false},
		{"transient listed: a timeout retried", transient, Outcome{Class: Transient}, true},
		{"transient listed: 504 retried", transient, ClassifyResponse(504, nil, nil, now), true},
		{"429 listed: a spend-limit 429 retried by its status", transient, spend, true},
		{"transient listed: a cancellation stops", transient, Outcome{Class: Terminal}, false},
		{"over the SDKs' rule: 529 passed back", overSDK, ClassifyResponse(529, nil, nil, now), false},
		{"over the SDKs' rule: 503 retried", overSDK, ClassifyResponse(503, nil, nil, now), true},
		{"no mid-stream retries: a listed class inside a 200 stops", noMidStream, midStream, false},
		{"no mid-stream retries: a listed class as a 529 retried", noMidStream, ClassifyResponse(529, nil, nil, now), true},
		{"no capacity retries: a listed 503 stops", noCapacity, ClassifyResponse(503, nil, nil, now), false},
		{"no capacity retries: a listed 500 retried", noCapacity, ClassifyResponse(500, nil, nil, now), true},
	})
}

// An Op that stops on an outcome retry_on does not list ends with that
// outcome after one attempt: a sidecar passes the 529 back as it came.
func TestRetryOnOpPassesTheOutcomeBack(t *testing.T) {
	plan := &Plan{Policy: Policy{Backoff: Constant{Wait: time.Second}, MaxAttempts: 3, RetryOn: RetryOn{Statuses: mustStatuses(t, 503)}}}
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct {
		status, attempts int
	}{{529, 1}, {503, 3}} {
		var op Op
		op.Start(plan)
		at := time.Duration(0)
		var stop StopReason
		for {
			st := op.Before(plan, Moment{Now: now.Add(at), Since: at}, nil, rng)
			if st.Kind != StepSend {
				t.Fatalf("status %d: step %+v before attempt %d", tc.status, st, op.Attempts()+1)
			}
			st = op.After(plan, Moment{Now: now.Add(at), Since: at}, ClassifyResponse(tc.status, nil, nil, now), true, nil, rng)
			if st.Kind == StepStop {
				stop = st.Reason
				break
			}
			at += st.Delay
		}
		want := StopAttempts
		if tc.status == 529 {
			want = StopTerminal
		}
		if op.Attempts() != tc.attempts || stop != want {
			t.Errorf("status %d: %d attempts, stopped by %v; want %d, %v", tc.status, op.Attempts(), stop, tc.attempts, want)
		}
	}
}

// Statuses holds 400-599 and refuses the rest; String lists them in order.
func TestStatusSet(t *testing.T) {
	s := mustStatuses(t, 599, 400, 503, 529)
	if got := s.String(); got != "400,503,529,599" {
		t.Errorf("String() = %q, want 400,503,529,599", got)
	}
	for _, c := range []int{400, 503, 529, 599} {
		if !s.Has(c) {
			t.Errorf("Has(%d) = false", c)
		}
	}
	for _, c := range []int{0, 200, 399, 401, 502, 504, 600, 655, -1} {
		if s.Has(c) {
			t.Errorf("Has(%d) = true", c)
		}
	}
	for _, c := range []int{399, 600, 0, 200} {
		if _, err := Statuses(c); err == nil {
			t.Errorf("Statuses(%d) gave no error", c)
		}
	}
	on := RetryOn{Statuses: mustStatuses(t, 529, 503), Classes: Classes(Transient, RetryAfter)}
	if got := on.String(); got != "503,529,retry-after,transient" {
		t.Errorf("RetryOn.String() = %q", got)
	}
	if on.IsZero() || !(RetryOn{}).IsZero() {
		t.Error("IsZero is wrong")
	}
}
