package policies_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// step is one scripted attempt: it runs for took, then returns err.
type step struct {
	took time.Duration
	err  error
}

// script replays steps, one per attempt; the last step repeats forever. It
// records when each attempt started (since origin) and the model it was told.
type script struct {
	origin time.Time
	steps  []step
	starts []time.Duration
	models []string
}

func newScript(steps ...step) *script { return &script{origin: time.Now(), steps: steps} }

func (s *script) op(ctx context.Context, a policies.Attempt) error {
	s.starts = append(s.starts, time.Since(s.origin))
	s.models = append(s.models, a.Model)
	st := s.steps[min(a.Number, len(s.steps))-1]
	t := time.NewTimer(st.took)
	defer t.Stop()
	select {
	case <-t.C:
		return st.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func httpErr(status int, body []byte, kv ...string) error {
	return &policies.HTTPError{StatusCode: status, Header: hdr(kv...), Body: body}
}

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func errBody(typ string) []byte {
	return []byte(`{"type":"error","error":{"type":"` + typ + `","message":"x"}}`)
}

var spendCap = []byte(`{"type":"error","error":{"type":"rate_limit_error","message":"spend","details":{"error_code":"enforced_spend_limit_reached"}}}`)

const rt = 100 * time.Millisecond // scripted response time

// recorder keeps every hook event.
type recorder struct {
	retries   []policies.RetryEvent
	fallbacks []policies.FallbackEvent
	giveUps   []*policies.Error
}

func (r *recorder) hooks() policies.Hooks {
	return policies.Hooks{
		OnRetryScheduled: func(e policies.RetryEvent) { r.retries = append(r.retries, e) },
		OnFallback:       func(e policies.FallbackEvent) { r.fallbacks = append(r.fallbacks, e) },
		OnGiveUp:         func(e *policies.Error) { r.giveUps = append(r.giveUps, e) },
	}
}

// checkWaits asserts that every retry started exactly the scheduled delay
// after the failed attempt ended.
func checkWaits(t *testing.T, s *script, rec *recorder) {
	t.Helper()
	for i, ev := range rec.retries {
		end := s.starts[i] + s.steps[min(i+1, len(s.steps))-1].took
		if got := s.starts[i+1] - end; got != ev.Delay {
			t.Errorf("retry after attempt %d: waited %v, scheduled %v", ev.Attempt, got, ev.Delay)
		}
	}
}

func seeded() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

func TestDoOverloadThenMidStreamThenFallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(
			step{rt, httpErr(529, errBody("overloaded_error"))},
			step{rt, httpErr(200, errBody("overloaded_error"))}, // mid-stream error event
			step{rt, httpErr(529, errBody("overloaded_error"))},
			step{rt, nil},
		)
		rec := &recorder{}
		fb := &policies.ModelFallback{Primary: "big", Fallback: "small"}
		err := policies.Do(t.Context(), s.op, policies.WithFallback(fb), policies.WithHooks(rec.hooks()), policies.WithRand(seeded()))
		if err != nil {
			t.Fatalf("Do: %v", err)
		}
		if got, want := strings.Join(s.models, ","), "big,big,big,small"; got != want {
			t.Errorf("models %s, want %s", got, want)
		}
		if len(rec.fallbacks) != 1 || rec.fallbacks[0] != (policies.FallbackEvent{Attempt: 3, From: "big", To: "small"}) {
			t.Errorf("fallback events %+v", rec.fallbacks)
		}
		if len(rec.retries) != 3 || len(rec.giveUps) != 0 {
			t.Fatalf("retries %d, give-ups %d", len(rec.retries), len(rec.giveUps))
		}
		for i, ev := range rec.retries {
			ceiling := 500 * time.Millisecond << i
			if ev.Outcome.Class != policies.Capacity || ev.Delay < 0 || ev.Delay >= ceiling {
				t.Errorf("retry %d: %+v, want capacity with delay in [0, %v)", i, ev, ceiling)
			}
		}
		checkWaits(t, s, rec)
		if fb.StartModel() != "big" {
			t.Errorf("non-sticky fallback leaked into the next operation")
		}
	})
}

func TestDoStickyFallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fb := &policies.ModelFallback{Primary: "big", Fallback: "small", After: 1, Sticky: true}
		s := newScript(step{rt, httpErr(529, nil)}, step{rt, nil})
		if err := policies.Do(t.Context(), s.op, policies.WithFallback(fb)); err != nil {
			t.Fatal(err)
		}
		s2 := newScript(step{rt, nil})
		if err := policies.Do(t.Context(), s2.op, policies.WithFallback(fb)); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(append(s.models, s2.models...), ","); got != "big,small,small" {
			t.Errorf("models %s, want big,small,small", got)
		}
	})
}

func TestDoRateLimitNeverFallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fb := &policies.ModelFallback{Primary: "big", Fallback: "small", After: 1}
		s := newScript(step{rt, httpErr(429, nil, "retry-after", "1")}, step{rt, httpErr(429, nil)}, step{rt, httpErr(429, nil)}, step{rt, nil})
		if err := policies.Do(t.Context(), s.op, policies.WithFallback(fb)); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(s.models, ","); got != "big,big,big,big" {
			t.Errorf("models %s: a 429 must not switch models", got)
		}
	})
}

func TestDoRetryAfterHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := &policies.Gate{}
		s := newScript(step{rt, httpErr(429, errBody("rate_limit_error"), "retry-after", "2")}, step{rt, nil})
		rec := &recorder{}
		err := policies.Do(t.Context(), s.op, policies.WithGate(gate), policies.WithHooks(rec.hooks()), policies.WithRand(seeded()))
		if err != nil {
			t.Fatal(err)
		}
		// The backoff's first draw is below 0.5 s; the server's 2 s wins.
		if len(s.starts) != 2 || s.starts[1] != rt+2*time.Second {
			t.Errorf("attempt starts %v, want [0 %v]", s.starts, rt+2*time.Second)
		}
		if len(rec.retries) != 1 || rec.retries[0].Outcome.Class != policies.RetryAfter || rec.retries[0].Delay != 2*time.Second {
			t.Errorf("retry events %+v", rec.retries)
		}
		// The gate was pushed to the end of the server's wait.
		if got := gate.Ready(s.origin).Sub(s.origin); got != rt+2*time.Second {
			t.Errorf("gate opens at %v, want %v", got, rt+2*time.Second)
		}
	})
}

func TestDoSpendCapIsTerminal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(step{rt, httpErr(429, spendCap)}, step{rt, nil})
		err := policies.Do(t.Context(), s.op)
		var pe *policies.Error
		if !errors.As(err, &pe) {
			t.Fatalf("Do = %v, want *policies.Error", err)
		}
		if pe.Reason != policies.StopTerminal || pe.Attempts != 1 || pe.Elapsed != rt {
			t.Errorf("got %+v, want terminal after 1 attempt in %v", pe, rt)
		}
		var he *policies.HTTPError
		if !errors.As(err, &he) || he.StatusCode != 429 {
			t.Errorf("last error not reachable through errors.As: %v", err)
		}
	})
}

func TestDoTransientThenTerminal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(step{rt, httpErr(500, errBody("api_error"))}, step{rt, httpErr(400, errBody("invalid_request_error"))}, step{rt, nil})
		rec := &recorder{}
		err := policies.Do(t.Context(), s.op, policies.WithHooks(rec.hooks()))
		var pe *policies.Error
		if !errors.As(err, &pe) || pe.Reason != policies.StopTerminal || pe.Attempts != 2 || pe.LastOutcome.Status != 400 {
			t.Fatalf("Do = %v, want terminal stop after 2 attempts on the 400", err)
		}
		if len(rec.retries) != 1 || rec.retries[0].Outcome.Class != policies.Transient {
			t.Errorf("retry events %+v", rec.retries)
		}
		if len(rec.giveUps) != 1 || rec.giveUps[0] != pe {
			t.Errorf("OnGiveUp got %v, want the returned error", rec.giveUps)
		}
	})
}

func TestDoOverloadForeverStopsAtBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const budget = 3 * time.Second
		s := newScript(step{rt, httpErr(529, errBody("overloaded_error"))})
		rec := &recorder{}
		start := time.Now()
		err := policies.Do(t.Context(), s.op, policies.WithBudget(budget), policies.WithHooks(rec.hooks()), policies.WithRand(seeded()))
		var pe *policies.Error
		if !errors.As(err, &pe) || pe.Reason != policies.StopDeadline {
			t.Fatalf("Do = %v, want a deadline stop", err)
		}
		if pe.Attempts < 3 || pe.Attempts != len(s.starts) {
			t.Errorf("attempts %d (script saw %d), want several", pe.Attempts, len(s.starts))
		}
		for i, at := range s.starts {
			if at > budget {
				t.Errorf("attempt %d started at %v, after the budget", i+1, at)
			}
		}
		// Do gave up as soon as the last response arrived: no sleep towards the budget.
		if last := s.starts[len(s.starts)-1] + rt; pe.Elapsed != last || time.Since(start) != last {
			t.Errorf("returned after %v, want at the last failure %v", pe.Elapsed, last)
		}
		checkWaits(t, s, rec)
	})
}

func TestDoServerWaitBeyondBudgetStopsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(step{rt, httpErr(429, nil, "retry-after", "10")}, step{rt, nil})
		start := time.Now()
		err := policies.Do(t.Context(), s.op, policies.WithBudget(5*time.Second))
		var pe *policies.Error
		if !errors.As(err, &pe) || pe.Reason != policies.StopDeadline || pe.Attempts != 1 {
			t.Fatalf("Do = %v, want a deadline stop after 1 attempt", err)
		}
		if d := time.Since(start); d != rt {
			t.Errorf("Do took %v, want %v (no sleep)", d, rt)
		}
	})
}

func TestDoMaxAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(step{rt, httpErr(503, nil)})
		err := policies.Do(t.Context(), s.op, policies.WithMaxAttempts(3))
		var pe *policies.Error
		if !errors.As(err, &pe) || pe.Reason != policies.StopAttempts || pe.Attempts != 3 || len(s.starts) != 3 {
			t.Fatalf("Do = %v, want attempts stop after 3", err)
		}
	})
}

func TestDoCancelDuringWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		s := newScript(step{rt, httpErr(529, nil)})
		time.AfterFunc(time.Second, cancel)
		start := time.Now()
		err := policies.Do(ctx, s.op, policies.WithBackoff(policies.Constant{Wait: time.Minute}))
		var pe *policies.Error
		if !errors.As(err, &pe) || pe.Reason != policies.StopCancelled || !errors.Is(err, context.Canceled) {
			t.Fatalf("Do = %v, want a cancelled stop wrapping context.Canceled", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("Do returned after %v, want at the cancellation (1s)", d)
		}
		if pe.Attempts != 1 {
			t.Errorf("attempts %d, want 1", pe.Attempts)
		}
	})
}

func TestDoCallerDeadlineDuringAttemptNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		s := newScript(step{rt, nil}) // the attempt outlives the caller's deadline
		err := policies.Do(ctx, s.op)
		var pe *policies.Error
		if !errors.As(err, &pe) || pe.Reason != policies.StopCancelled || pe.Attempts != 1 || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Do = %v, want cancelled after 1 attempt", err)
		}
	})
}

func TestDoAttemptTimeoutIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(step{time.Hour, nil}, step{rt, nil}) // the first attempt hangs
		rec := &recorder{}
		err := policies.Do(t.Context(), s.op, policies.WithAttemptTimeout(time.Second), policies.WithHooks(rec.hooks()))
		if err != nil {
			t.Fatalf("Do = %v", err)
		}
		if len(rec.retries) != 1 || rec.retries[0].Outcome.Class != policies.Transient {
			t.Errorf("retries %+v, want one transient", rec.retries)
		}
	})
}

func TestDoNilOperation(t *testing.T) {
	if err := policies.Do(context.Background(), nil); err == nil {
		t.Fatal("Do(nil op) succeeded")
	}
}

func TestDoCustomClassifier(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errBusy := errors.New("busy")
		classify := func(err error, now time.Time) policies.Outcome {
			if errors.Is(err, errBusy) {
				return policies.Outcome{Class: policies.Capacity}
			}
			return policies.ClassifyError(err, now)
		}
		s := newScript(step{rt, errBusy}, step{rt, nil})
		if err := policies.Do(t.Context(), s.op, policies.WithClassifier(classify)); err != nil {
			t.Fatalf("Do = %v; the custom classifier should make errBusy retryable", err)
		}
		s = newScript(step{rt, errBusy}, step{rt, nil})
		if err := policies.Do(t.Context(), s.op); err == nil {
			t.Fatal("the default classifier retried an unrecognised error")
		}
	})
}

func TestDoThrottleQueueFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		thr, err := policies.NewThrottle(1, time.Second, 1)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		for i := 0; ; i++ { // fill the queue
			if _, err := thr.Reserve(now, time.Time{}); errors.Is(err, policies.ErrQueueFull) {
				break
			} else if err != nil || i == 10 {
				t.Fatalf("reservation %d: %v", i, err)
			}
		}
		s := newScript(step{rt, nil})
		err = policies.Do(t.Context(), s.op, policies.WithThrottle(thr))
		var pe *policies.Error
		if !errors.As(err, &pe) || pe.Reason != policies.StopQueueFull || !errors.Is(err, policies.ErrQueueFull) || pe.Attempts != 0 {
			t.Fatalf("Do = %v, want a queue-full stop before any attempt", err)
		}
	})
}

func TestDoThrottleSpacesStarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		thr, _ := policies.NewThrottle(2, time.Second, 0)
		origin := time.Now()
		var mu sync.Mutex
		var starts []time.Duration
		op := func(ctx context.Context, a policies.Attempt) error {
			mu.Lock()
			starts = append(starts, time.Since(origin))
			mu.Unlock()
			return nil
		}
		var wg sync.WaitGroup
		for range 5 {
			wg.Go(func() { _ = policies.Do(t.Context(), op, policies.WithThrottle(thr)) })
		}
		wg.Wait()
		if len(starts) != 5 || starts[4] != 2*time.Second {
			t.Errorf("starts %v, want 5 starts 0.5 s apart ending at 2s", starts)
		}
	})
}

func TestDoLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim, err := policies.NewLimiter(2, 0)
		if err != nil {
			t.Fatal(err)
		}
		var inFlight, peak atomic.Int32
		op := func(ctx context.Context, a policies.Attempt) error {
			n := inFlight.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(rt)
			inFlight.Add(-1)
			return nil
		}
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				if err := policies.Do(t.Context(), op, policies.WithLimiter(lim)); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if peak.Load() != 2 {
			t.Errorf("peak in flight %d, want 2", peak.Load())
		}
	})
}

func TestDoLimiterQueueFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim, _ := policies.NewLimiter(1, 1)
		release := make(chan struct{})
		hold := func(ctx context.Context, a policies.Attempt) error { <-release; return nil }
		var wg sync.WaitGroup
		wg.Go(func() { _ = policies.Do(t.Context(), hold, policies.WithLimiter(lim)) }) // holds the slot
		synctest.Wait()
		wg.Go(func() { _ = policies.Do(t.Context(), hold, policies.WithLimiter(lim)) }) // waits in the queue
		synctest.Wait()
		err := policies.Do(t.Context(), hold, policies.WithLimiter(lim))
		var pe *policies.Error
		if !errors.As(err, &pe) || pe.Reason != policies.StopQueueFull || !errors.Is(err, policies.ErrLimitQueueFull) {
			t.Errorf("Do = %v, want a queue-full stop", err)
		}
		close(release)
		wg.Wait()
		if lim.InFlight() != 0 {
			t.Errorf("%d slots still taken", lim.InFlight())
		}
	})
}

// TestGateSharedByManyWorkers runs many workers on one Gate: once any worker
// gets a retry-after, no worker starts an attempt before it has passed.
func TestGateSharedByManyWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := &policies.Gate{}
		origin := time.Now()
		var mu sync.Mutex
		var starts []time.Duration
		var limited atomic.Bool
		op := func(ctx context.Context, a policies.Attempt) error {
			mu.Lock()
			starts = append(starts, time.Since(origin))
			mu.Unlock()
			time.Sleep(rt)
			if limited.CompareAndSwap(false, true) {
				return httpErr(429, nil, "retry-after", "2")
			}
			return nil
		}
		var wg sync.WaitGroup
		for w := range 50 {
			wg.Go(func() {
				time.Sleep(time.Duration(w) * 10 * time.Millisecond)
				for range 3 {
					if err := policies.Do(t.Context(), op, policies.WithGate(gate)); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		// The 429 answered at 0.1 s; the gate holds everyone until 2.1 s.
		for _, at := range starts {
			if at > rt && at < rt+2*time.Second {
				t.Errorf("an attempt started at %v, while the gate was closed", at)
			}
		}
		if len(starts) != 151 {
			t.Errorf("%d attempts, want 151", len(starts))
		}
	})
}

// TestGateRace hammers one Gate from many goroutines on the real clock (no
// sleeps); run with -race.
func TestGateRace(t *testing.T) {
	gate := &policies.Gate{}
	base := time.Now()
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			for j := range 200 {
				now := base.Add(time.Duration(j) * time.Millisecond)
				gate.Push(now, time.Duration(i)*time.Millisecond)
				if r := gate.Ready(now); r.Before(now) {
					t.Errorf("Ready(%v) = %v, before now", now, r)
				}
			}
		})
	}
	wg.Wait()
	if got, want := gate.Ready(base), base.Add(199*time.Millisecond+63*time.Millisecond); !got.Equal(want) {
		t.Errorf("gate opens at %v, want %v", got.Sub(base), want.Sub(base))
	}
}

// bubbleGoroutines returns the stacks of the goroutines in the caller's
// synctest bubble other than the caller itself and synctest's own.
func bubbleGoroutines(t *testing.T) []string {
	t.Helper()
	buf := make([]byte, 1<<16)
	self := string(buf[:runtime.Stack(buf, false)])
	header, _, _ := strings.Cut(self, "\n")
	_, bubble, ok := strings.Cut(header, "synctest bubble ")
	if !ok {
		t.Fatalf("not in a synctest bubble: %q", header)
	}
	bubble, _, _ = strings.Cut(bubble, "]")
	buf = make([]byte, 1<<22)
	var others []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		h, _, _ := strings.Cut(g, "\n")
		inBubble := strings.Contains(h, "synctest bubble "+bubble+"]") || strings.Contains(h, "synctest bubble "+bubble+",")
		if h != header && inBubble && !strings.Contains(g, "testing/synctest.Test") {
			others = append(others, g)
		}
	}
	return others
}

// customCtx is a context the context package does not recognise (its Done
// channel is its own; it is never cancelled), so every cancellable context
// derived from it gets a goroutine that waits for either to end: a derived
// context Do forgot to cancel would leave that goroutine behind.
type customCtx struct {
	context.Context
	done chan struct{}
}

func (c customCtx) Done() <-chan struct{} { return c.done }

// TestDoLeavesNoGoroutine checks that nothing of Do outlives it, whether it
// succeeds, gives up or is cancelled mid-wait: after synctest.Wait, the
// bubble holds no goroutine but the test's own.
func TestDoLeavesNoGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The check can fail: a goroutine parked in the bubble is found.
		release := make(chan struct{})
		go func() { <-release }()
		synctest.Wait()
		found := bubbleGoroutines(t)
		close(release)
		synctest.Wait()
		if len(found) != 1 {
			t.Fatalf("found %d parked goroutines, want 1: the check cannot see leaks\n%s", len(found), strings.Join(found, "\n\n"))
		}

		gate := &policies.Gate{}
		lim, _ := policies.NewLimiter(1, 0)
		thr, _ := policies.NewThrottle(10, time.Second, 0)
		opts := []policies.Option{policies.WithGate(gate), policies.WithLimiter(lim), policies.WithThrottle(thr),
			policies.WithAttemptTimeout(time.Second), policies.WithBudget(time.Minute)}
		ctx := customCtx{t.Context(), make(chan struct{})}

		check := func(name string) {
			synctest.Wait()
			for _, g := range bubbleGoroutines(t) {
				t.Errorf("%s: goroutine left behind:\n%s", name, g)
			}
		}
		_ = policies.Do(ctx, newScript(step{rt, httpErr(529, nil)}, step{rt, nil}).op, opts...)
		check("success after a retry")
		_ = policies.Do(ctx, newScript(step{rt, httpErr(400, nil)}).op, opts...)
		check("terminal")
		_ = policies.Do(ctx, newScript(step{2 * time.Second, nil}, step{rt, nil}).op, opts...)
		check("attempt timeout")
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(300*time.Millisecond, cancel)
		_ = policies.Do(cctx, newScript(step{rt, httpErr(429, nil, "retry-after", "30")}).op, opts...)
		check("cancelled mid-wait")
		// A limiter wait that ends with the budget.
		if err := lim.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		_ = policies.Do(ctx, newScript(step{rt, nil}).op, append(opts, policies.WithBudget(time.Second))...)
		lim.ReleaseSlot()
		check("limiter wait past the budget")
	})
}

func TestDoLimiterWaitCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim, _ := policies.NewLimiter(1, 0)
		if err := lim.Acquire(t.Context()); err != nil { // hold the only slot
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		err := policies.Do(ctx, newScript(step{rt, nil}).op, policies.WithLimiter(lim))
		var pe *policies.Error
		if !errors.As(err, &pe) || pe.Reason != policies.StopCancelled || pe.Attempts != 0 || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Do = %v, want cancelled before any attempt", err)
		}
		lim.ReleaseSlot()
		if lim.InFlight() != 0 {
			t.Errorf("%d slots taken after release", lim.InFlight())
		}
	})
}

// TestStickyFallbackShared runs many operations at once on one sticky
// ModelFallback; run with -race.
func TestStickyFallbackShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fb := &policies.ModelFallback{Primary: "big", Fallback: "small", After: 2, Sticky: true}
		var small atomic.Int32
		op := func(ctx context.Context, a policies.Attempt) error {
			time.Sleep(rt)
			if a.Model == "small" {
				small.Add(1)
				return nil
			}
			return httpErr(529, nil)
		}
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				if err := policies.Do(t.Context(), op, policies.WithFallback(fb)); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if small.Load() != 20 || fb.StartModel() != "small" {
			t.Errorf("%d operations finished on the fallback; start model now %q", small.Load(), fb.StartModel())
		}
	})
}
