package machine

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func TestPolicyNext(t *testing.T) {
	p := Policy{Backoff: Exponential{Base: 500 * ms, Factor: 2, Cap: 8 * time.Second}, MaxAttempts: 4, Deadline: 10 * time.Second}
	capacity := Outcome{Class: Capacity, Status: 529}
	tests := []struct {
		name     string
		attempts int
		elapsed  time.Duration
		out      Outcome
		want     Decision
	}{
		{"first failure waits base", 1, 100 * ms, capacity, Decision{Delay: 500 * ms}},
		{"third failure waits 2s", 3, 2 * time.Second, capacity, Decision{Delay: 2 * time.Second}},
		{"max attempts stops", 4, 3 * time.Second, capacity, Decision{Stop: StopAttempts}},
		{"terminal stops at once", 1, 0, Outcome{Class: Terminal, Status: 400}, Decision{Stop: StopTerminal}},
		{"start exactly at the deadline is allowed", 2, 9 * time.Second, capacity, Decision{Delay: time.Second}},
		{"start past the deadline gives up", 2, 9*time.Second + 1, capacity, Decision{Stop: StopDeadline}},
		{"server wait longer than backoff wins", 1, 0, Outcome{Class: RetryAfter, Status: 429, ServerWait: 2 * time.Second}, Decision{Delay: 2 * time.Second}},
		{"server wait shorter than backoff is honoured exactly", 3, 0, Outcome{Class: RetryAfter, ServerWait: 10 * ms}, Decision{Delay: 10 * ms}},
		{"server wait past the deadline stops", 1, time.Second, Outcome{Class: RetryAfter, ServerWait: time.Hour}, Decision{Stop: StopDeadline}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Next(tt.attempts, 0, tt.elapsed, tt.out, nil); got != tt.want {
				t.Fatalf("Next = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// AtLeastBackoff keeps a server wait as a floor under the backoff;
// ServerWaitJitter spreads a server wait over [wait, wait+jitter).
func TestPolicyServerWaitOptions(t *testing.T) {
	p := Policy{Backoff: Exponential{Base: 500 * ms, Factor: 2, Cap: 8 * time.Second}, AtLeastBackoff: true}
	short := Outcome{Class: RetryAfter, Status: 429, ServerWait: 10 * ms}
	if got := p.Next(3, 0, 0, short, nil); got.Delay != 2*time.Second {
		t.Errorf("at least backoff: delay %v, want the 2 s backoff", got.Delay)
	}
	if got := p.Next(1, 0, 0, Outcome{Class: RetryAfter, ServerWait: 3 * time.Second}, nil); got.Delay != 3*time.Second {
		t.Errorf("at least backoff: delay %v, want the 3 s server wait", got.Delay)
	}
	p = Policy{Backoff: Exponential{Base: 500 * ms, Factor: 2, Cap: 8 * time.Second}, IgnoreServerWaitAbove: time.Minute}
	if got := p.Next(1, 0, 0, Outcome{Class: RetryAfter, ServerWait: 2 * time.Minute}, nil); got.Delay != 500*ms {
		t.Errorf("server wait above the limit: delay %v, want the 500 ms backoff", got.Delay)
	}
	if got := p.Next(1, 0, 0, Outcome{Class: RetryAfter, ServerWait: time.Minute}, nil); got.Delay != time.Minute {
		t.Errorf("server wait at the limit: delay %v, want it honoured", got.Delay)
	}
	p = Policy{Backoff: Exponential{Base: 500 * ms, Factor: 2, Cap: 8 * time.Second}, ServerWaitJitter: 100 * ms}
	rng := rand.New(rand.NewPCG(1, 1))
	seen := map[time.Duration]bool{}
	for range 50 {
		d := p.Next(3, 0, 0, short, rng).Delay
		if d < 10*ms || d >= 110*ms {
			t.Fatalf("jittered server wait %v outside [10ms, 110ms)", d)
		}
		seen[d] = true
	}
	if len(seen) < 40 {
		t.Errorf("only %d distinct jittered waits in 50", len(seen))
	}
}

func TestPolicyWithoutLimits(t *testing.T) {
	p := Policy{Backoff: Constant{Wait: ms}}
	if d := p.Next(1_000_000, 0, 1000*time.Hour, Outcome{Class: Transient}, nil); d.Stop != NotStopped || d.Delay != ms {
		t.Fatalf("a policy without limits stopped: %+v", d)
	}
}

// Next must not draw randomness when it stops anyway: a stopped operation
// must not shift the stream of anything sharing the source.
func TestPolicyNextDrawsOnlyWhenRetrying(t *testing.T) {
	p := Policy{Backoff: FullJitter{Base: time.Second, Factor: 2, Cap: time.Minute}, MaxAttempts: 2}
	a := rand.New(rand.NewPCG(1, 2))
	b := rand.New(rand.NewPCG(1, 2))
	p.Next(2, 0, 0, Outcome{Class: Capacity}, a) // stops: attempts
	p.Next(1, 0, 0, Outcome{Class: Terminal}, a) // stops: terminal
	if a.Uint64() != b.Uint64() {
		t.Fatal("a stopping decision consumed random draws")
	}
}

func TestNamesOfClassesAndReasons(t *testing.T) {
	if RetryAfter.String() != "retry-after" || Terminal.String() != "terminal" {
		t.Fatalf("class names: %v %v", RetryAfter, Terminal)
	}
	if StopDeadline.String() != "deadline" || StopAttempts.String() != "attempts" || StopQueueFull.String() != "queue_full" {
		t.Fatalf("reason names: %v %v %v", StopDeadline, StopAttempts, StopQueueFull)
	}
}

func TestStartsInTimeNegativeDeadline(t *testing.T) {
	for _, tt := range []struct {
		deadline, since time.Duration
		want            bool
	}{
		{0, time.Hour, true},
		{time.Second, time.Second, true},
		{time.Second, time.Second + 1, false},
		{-time.Second, 0, false},
	} {
		if got := (Policy{Deadline: tt.deadline}).StartsInTime(tt.since); got != tt.want {
			t.Errorf("Deadline %v: StartsInTime(%v) = %v, want %v", tt.deadline, tt.since, got, tt.want)
		}
	}
}

// NoCapacityRetries ends an operation at its first capacity failure, as an
// agent CLI's background work does; other failures retry as before.
func TestPolicyNoCapacityRetries(t *testing.T) {
	p := Policy{Backoff: Constant{Wait: ms}, MaxAttempts: 5, NoCapacityRetries: true}
	for _, tt := range []struct {
		out  Outcome
		want Decision
	}{
		{Outcome{Class: Capacity, Status: 529}, Decision{Stop: StopTerminal}},
		{Outcome{Class: Capacity, Status: 503}, Decision{Stop: StopTerminal}},
		{Outcome{Class: Transient, Status: 500}, Decision{Delay: ms}},
		{Outcome{Class: RetryAfter, Status: 429, ServerWait: time.Second}, Decision{Delay: time.Second}},
	} {
		if got := p.Next(1, 0, 0, tt.out, nil); got != tt.want {
			t.Errorf("%v: Next = %+v, want %+v", tt.out, got, tt.want)
		}
	}
}

// A server wait above a policy's bound is ignored (the backoff decides),
// clamped to the bound, or ends the operation, as the policy says; a wait
// within the bound is honoured by all three.
func TestServerWaitRules(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	back := Constant{Wait: 3 * time.Second}
	long := Outcome{Class: RetryAfter, Status: 429, ServerWait: 90 * time.Second}
	short := Outcome{Class: RetryAfter, Status: 429, ServerWait: 20 * time.Second}
	cases := []struct {
		name       string
		p          Policy
		long       Decision
		shortDelay time.Duration
	}{
		{"honour", Policy{Backoff: back}, Decision{Delay: 90 * time.Second}, 20 * time.Second},
		{"ignore above 60s", Policy{Backoff: back, IgnoreServerWaitAbove: time.Minute}, Decision{Delay: 3 * time.Second}, 20 * time.Second},
		{"clamp to 8s", Policy{Backoff: back, ClampServerWait: 8 * time.Second}, Decision{Delay: 8 * time.Second}, 8 * time.Second},
		{"fail above 60s", Policy{Backoff: back, FailServerWaitAbove: time.Minute},
			Decision{Stop: StopDeadline, Cause: &ServerWaitError{Wait: 90 * time.Second, Limit: time.Minute}}, 20 * time.Second},
		// Next alone sees no earlier waits: the cap bounds this one.
		{"total cap 60s", Policy{Backoff: back, TotalServerWaitCap: time.Minute},
			Decision{Stop: StopDeadline, Cause: &ServerWaitError{Wait: 90 * time.Second, Limit: time.Minute, Total: true}}, 20 * time.Second},
	}
	for _, c := range cases {
		got := c.p.Next(1, 0, 0, long, rng)
		if got.Stop != c.long.Stop || got.Delay != c.long.Delay || fmt.Sprint(got.Cause) != fmt.Sprint(c.long.Cause) {
			t.Errorf("%s, 90s wait: %+v, want %+v", c.name, got, c.long)
		}
		if got := c.p.Next(1, 0, 0, short, rng); got.Stop != NotStopped || got.Delay != c.shortDelay {
			t.Errorf("%s, 20s wait: %+v, want a wait of %v", c.name, got, c.shortDelay)
		}
	}
}

// The SDKs' status rule retries what the official SDKs retry, whatever the
// class (a spend-limit 429 too), and x-should-retry decides where given;
// the mid-stream rule stops a failure inside a 200 whatever its class.
func TestSDKRules(t *testing.T) {
	back := Constant{Wait: time.Second}
	status := Policy{Backoff: back, RetryByStatus: true}
	stream := Policy{Backoff: back, NoMidStreamRetries: true}
	sdk := Policy{Backoff: back, RetryByStatus: true, NoMidStreamRetries: true}
	classRule := Policy{Backoff: back}
	spend, midStream := spendLimited(), midStreamOverload()
	checkRules(t, []ruleCase{
		{"class rule: spend limit stops", classRule, spend, false},
		{"status rule: spend limit retried", status, spend, true},
		{"status rule: 429 with x-should-retry false stops", status, ClassifyResponse(429, hdr("x-should-retry", "false"), nil, now), false},
		{"status rule: spend limit with x-should-retry false stops", status,
			ClassifyResponse(429, hdr("x-should-retry", "false"), spendBody(CodeEnforcedSpendLimit), now), false},
		{"status rule: 400 with x-should-retry true retried", status, ClassifyResponse(400, hdr("x-should-retry", "true"), nil, now), true},
		{"status rule: 500 with x-should-retry false stops", status, ClassifyResponse(500, hdr("x-should-retry", "false"), nil, now), false},
		{"status rule: 409 retried", status, ClassifyResponse(409, nil, nil, now), true},
		{"status rule: 404 stops", status, ClassifyResponse(404, nil, nil, now), false},
		{"status rule: terminal 502 (sent with x-should-retry false) stops", status, Outcome{Class: Terminal, Status: 502}, false},
		{"status rule: capacity 502 retried", status, Outcome{Class: Capacity, Status: 502}, true},
		{"status rule: connection error retried", status, Outcome{Class: Transient}, true},
		{"status rule: cancellation stops", status, Outcome{Class: Terminal}, false},
		{"status rule alone: mid-stream follows the class", status, midStream, true},
		{"class rule: mid-stream retried", classRule, midStream, true},
		{"mid-stream rule: stops", stream, midStream, false},
		{"mid-stream rule: a 529 still retried", stream, Outcome{Class: Capacity, Status: 529}, true},
		{"sdk: mid-stream stops", sdk, midStream, false},
		{"sdk: spend limit retried", sdk, spend, true},
	})
}

// ruleCase is a failure a policy retries, or stops with StopTerminal.
type ruleCase struct {
	name  string
	p     Policy
	out   Outcome
	retry bool
}

func checkRules(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, c := range cases {
		got := c.p.Next(1, 0, 0, c.out, rand.New(rand.NewPCG(1, 1)))
		if retried := got.Stop == NotStopped; retried != c.retry || !retried && got.Stop != StopTerminal {
			t.Errorf("%s: %+v gives %+v, want retry %v (else StopTerminal)", c.name, c.out, got, c.retry)
		}
	}
}

// spendLimited is a 429 whose body says a spend limit was reached.
func spendLimited() Outcome {
	return ClassifyResponse(429, nil, spendBody(CodeEnforcedSpendLimit), now)
}

// midStreamOverload is an overloaded_error event inside a streamed 200.
func midStreamOverload() Outcome {
	return ClassifyEvent("error", []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
}

// TotalServerWaitCap sums an operation's server waits (Portkey's example:
// 20 s, then 50 s passes a 60 s total), after clamp_to and ignore_above,
// each rounded up to a ServerWaitUnit; a new operation starts from zero.
func TestTotalServerWaitCap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	wait := func(d time.Duration) Outcome { return Outcome{Class: RetryAfter, Status: 429, ServerWait: d} }
	cases := []struct {
		name  string
		p     Policy
		waits []time.Duration
		stop  int // index of the wait that stops the operation; -1: none
	}{
		{"portkey", Policy{}, []time.Duration{20 * time.Second, 50 * time.Second}, 1},
		{"exactly the cap", Policy{}, []time.Duration{20 * time.Second, 20 * time.Second, 20 * time.Second, time.Millisecond}, 3},
		{"one wait above", Policy{}, []time.Duration{61 * time.Second}, 0},
		{"rounded up", Policy{}, []time.Duration{30 * time.Second, 30*time.Second - 5*time.Millisecond, 5 * time.Millisecond}, 2},
		{"clamped waits count their clamp", Policy{ClampServerWait: 10 * time.Second}, []time.Duration{time.Hour, time.Hour, time.Hour, time.Hour, time.Hour, time.Hour, time.Hour}, 6},
		{"ignored waits count nothing", Policy{IgnoreServerWaitAbove: 30 * time.Second}, []time.Duration{40 * time.Second, 30 * time.Second, 40 * time.Second, 30 * time.Second, time.Second}, 4},
	}
	for _, c := range cases {
		c.p.Backoff = Constant{Wait: time.Second}
		c.p.TotalServerWaitCap = time.Minute
		plan := &Plan{Policy: c.p}
		var op Op
		op.Start(plan)
		var now time.Time
		got := -1
		for i, w := range c.waits {
			if st := op.Before(plan, Moment{Now: now}, nil, rng); st.Kind != StepSend {
				t.Fatalf("%s: Before: %+v", c.name, st)
			}
			st := op.After(plan, Moment{Now: now}, wait(w), true, nil, rng)
			if st.Kind == StepStop {
				var we *ServerWaitError
				if st.Reason != StopDeadline || !errors.As(st.Cause, &we) || !we.Total || we.Limit != time.Minute {
					t.Errorf("%s: stop %+v, want deadline with the total cap's *ServerWaitError", c.name, st)
				}
				got = i
				break
			}
			now = now.Add(st.Delay)
		}
		if got != c.stop {
			t.Errorf("%s: stopped at wait %d, want %d", c.name, got, c.stop)
		}
		op.Start(plan)
		if st := op.Before(plan, Moment{Now: now}, nil, rng); st.Kind != StepSend {
			t.Fatalf("%s: Before: %+v", c.name, st)
		}
		if st := op.After(plan, Moment{Now: now}, wait(time.Minute), true, nil, rng); st.Kind != StepWait {
			t.Errorf("%s: a new operation's first 60 s wait: %+v, want honoured", c.name, st)
		}
	}
}
