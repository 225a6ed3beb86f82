package sim

import (
	"context"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// sidecar is a layer that retries with a fixed wait and, with orphans,
// does not receive its caller's deadline.
func sidecar(attempts int, wait time.Duration, orphans bool) Layer {
	l := layer("sidecar", attempts, wait, 0)
	l.NoDeadlinePropagation = orphans
	return l
}

func layerCount(t *testing.T, r Result, name string) int64 {
	t.Helper()
	v, ok := r.Counters.Get(name)
	if !ok {
		t.Fatalf("no counter %s in %v", name, r.Counters)
	}
	return v
}

// runSends runs p against an always-500 server answering in 100 ms and
// returns the result and when each attempt reached the server.
func runSends(t *testing.T, clients int, p Policy) (Result, []time.Duration) {
	t.Helper()
	var sends []time.Duration
	r, err := Run(Config{Seed: 1, Server: rejectAll(100 * time.Millisecond), Workload: &Burst{Clients: clients}, Policy: p,
		Observer: Observer{OnSend: func(at time.Duration, op int, _ bool) {
			if op >= clients {
				t.Errorf("OnSend names operation %d of %d", op, clients)
			}
			sends = append(sends, at)
		}}})
	if err != nil {
		t.Fatal(err)
	}
	return r, sends
}

// The app tries twice with a 200 ms attempt timeout around a sidecar that
// tries 4 times, 50 ms apart, against a server that fails every request
// after 100 ms. With deadline propagation the sidecar stops with each app
// attempt (2 requests each); without, each sidecar loop goes on to its 4
// requests after the app gave up on it, 2 of them sent after.
func TestLayersOrphansKeepSending(t *testing.T) {
	ms := time.Millisecond
	r, sends := runSends(t, 1, layeredPolicy(2, 0, 200*ms, sidecar(4, 50*ms, false)))
	if want := []time.Duration{0, 150 * ms, 200 * ms, 350 * ms}; !reflect.DeepEqual(sends, want) || r.GiveUps[0] != 400*ms {
		t.Errorf("propagated: sends at %v, gave up at %v; want %v, 400ms", sends, r.GiveUps, want)
	}
	if got := layerCount(t, r, "layers.after_giveup"); got != 0 {
		t.Errorf("propagated: %d attempts after the caller gave up, want 0", got)
	}

	r, sends = runSends(t, 1, layeredPolicy(2, 0, 200*ms, sidecar(4, 50*ms, true)))
	want := []time.Duration{0, 150 * ms, 200 * ms, 300 * ms, 350 * ms, 450 * ms, 500 * ms, 650 * ms}
	if !reflect.DeepEqual(sends, want) || r.GaveUp != 1 || r.GiveUps[0] != 400*ms || r.Completed != 0 {
		t.Errorf("orphans: sends at %v, gave up %d at %v; want sends at %v, one give-up at 400ms", sends, r.GaveUp, r.GiveUps, want)
	}
	for name, want := range map[string]int64{
		"layers.after_giveup": 4, "layers.sidecar.after_giveup": 4, "layers.sidecar.attempts_in": 2, "layers.sidecar.attempts": 8,
		"layers.outer.attempts": 2, "layers.outer.retries_transient": 1, "layers.sidecar.retries_transient": 6, "layers.sidecar.retries_capacity": 0,
	} {
		if got := layerCount(t, r, name); got != want {
			t.Errorf("orphans: %s = %d, want %d", name, got, want)
		}
	}
	if r.Attempts != 8 || r.Retries != 7 {
		t.Errorf("orphans: %d attempts, %d retries; want 8, 7", r.Attempts, r.Retries)
	}
}

// An orphan's success reaches nobody: the server recovers at 250 ms, after
// the app (one attempt, 200 ms timeout) gave up; the orphaned sidecar's
// next request succeeds, and the operation still gave up.
func TestLayersOrphanSuccessIsDiscarded(t *testing.T) {
	ms := time.Millisecond
	recovering := &CapacityWindows{ResponseTime: Fixed(100 * ms), Phases: []Phase{
		{Duration: 250 * ms, Reject: Rejection{Status: 503, Class: policies.Capacity}}, {Admit: 100, Window: time.Second, Reject: overloaded}}}
	r, err := Run(Config{Seed: 1, Server: recovering, Workload: &Burst{Clients: 1}, Policy: layeredPolicy(1, 0, 200*ms, sidecar(4, 50*ms, true))})
	if err != nil {
		t.Fatal(err)
	}
	if r.Completed != 0 || r.GaveUp != 1 || r.Attempts != 3 || r.Admitted != 1 {
		t.Errorf("%d completed, %d gave up, %d attempts, %d admitted; want 0, 1, 3 (the orphan stops at its success), 1", r.Completed, r.GaveUp, r.Attempts, r.Admitted)
	}
	if got := layerCount(t, r, "layers.sidecar.retries_capacity"); got != 2 {
		t.Errorf("sidecar retried %d capacity failures, want 2", got)
	}
}

// The policy's deadline ends an inner layer's wait too: a wait that
// passes it is not sat out, and no request is sent after it.
func TestLayersBudgetEndsInnerWaits(t *testing.T) {
	p := layeredPolicy(3, 0, 0, layer("sdk", 3, 2*time.Second, 0))
	p.Rules.Deadline = time.Second
	r, sends := runSends(t, 1, p)
	if len(sends) != 1 || r.GaveUp != 1 || r.GiveUps[0] != time.Second || r.GaveUpBy[policies.StopDeadline] != 1 {
		t.Errorf("sends at %v, gave up at %v (%v); want one send, a give-up at the 1s deadline", sends, r.GiveUps, r.GaveUpBy)
	}
}

// Without propagation the policy's deadline is the caller's alone: the
// sidecar's loop goes on after it (sends at 0, 150 ms; the deadline at
// 300 ms; then 300 and 450 ms by the orphan).
func TestLayersBudgetOrphans(t *testing.T) {
	ms := time.Millisecond
	p := layeredPolicy(5, 0, 0, sidecar(4, 50*ms, true))
	p.Rules.Deadline = 300 * ms
	r, sends := runSends(t, 1, p)
	want := []time.Duration{0, 150 * ms, 300 * ms, 450 * ms}
	if !reflect.DeepEqual(sends, want) || r.GiveUps[0] != 300*ms || r.GaveUpBy[policies.StopDeadline] != 1 {
		t.Errorf("sends at %v, gave up at %v (%v); want %v, a give-up at the deadline", sends, r.GiveUps, r.GaveUpBy, want)
	}
	if got := layerCount(t, r, "layers.after_giveup"); got != 2 {
		t.Errorf("%d attempts after the caller gave up, want 2", got)
	}
}

// Propagation is per layer: the app's timeout abandons the SDK, which
// receives it, but the sidecar inside the SDK goes on; the SDK's own
// timeout (200 ms, 2 attempts) orphans the sidecar as well.
func TestLayersOrphansNested(t *testing.T) {
	ms := time.Millisecond
	sdk := layer("sdk", 2, 0, 200*ms)
	r, sends := runSends(t, 1, layeredPolicy(1, 0, 0, sdk, sidecar(4, 50*ms, true)))
	want := []time.Duration{0, 150 * ms, 200 * ms, 300 * ms, 350 * ms, 450 * ms, 500 * ms, 650 * ms}
	if !reflect.DeepEqual(sends, want) || r.GiveUps[0] != 400*ms {
		t.Errorf("sdk timeout: sends at %v, gave up at %v; want %v, 400ms", sends, r.GiveUps, want)
	}
	if got := layerCount(t, r, "layers.sdk.after_giveup"); got != 0 {
		t.Errorf("the sdk, which receives the deadline, made %d attempts after its caller gave up", got)
	}
	// The app's 300 ms timeout abandons the SDK (in its second attempt,
	// sent at 200 ms) and orphans the sidecar inside it, whose request
	// sent at 200 ms is answered then: 2 requests after the first
	// orphan's caller gave up, 3 after the second's.
	r, sends = runSends(t, 1, layeredPolicy(1, 0, 300*ms, sdk, sidecar(4, 50*ms, true)))
	if !reflect.DeepEqual(sends, want) || r.GiveUps[0] != 300*ms {
		t.Errorf("app timeout: sends at %v, gave up at %v; want %v, 300ms", sends, r.GiveUps, want)
	}
	if got := layerCount(t, r, "layers.after_giveup"); got != 5 {
		t.Errorf("app timeout: %d attempts after a caller gave up, want 5", got)
	}
}

// A layer's coordinators are shared by every operation of the run at that
// layer: a sidecar's retry quota of 50 tokens at 5 a retry allows 10
// retries in all, however many callers send through it, orphans included.
func TestLayerCoordinatorsShared(t *testing.T) {
	for _, orphans := range []bool{false, true} {
		sc := sidecar(5, 10*time.Millisecond, orphans)
		sc.Coordinators = []machine.Spec{policies.RetryQuotaConfig{Capacity: 50, RetryCost: 5}}
		r, _ := runSends(t, 20, layeredPolicy(2, 0, 150*time.Millisecond, sc))
		if got := layerCount(t, r, "layers.sidecar.retries_transient"); got != 10 || r.Attempts != 40+10 {
			t.Errorf("orphans %v: the sidecar retried %d times, %d attempts; want 10 retries, 50 attempts", orphans, got, r.Attempts)
		}
	}
}

// A layer refuses coordinators it cannot drive, with the layer's name.
func TestLayerCoordinatorsRefused(t *testing.T) {
	for _, s := range []machine.Spec{machine.LimitConfig{MaxInFlight: 2}, policies.HedgeConfig{Delay: time.Second}, policies.PacerConfig{}} {
		sc := sidecar(3, 0, false)
		sc.Coordinators = []machine.Spec{s}
		cfg := Config{Server: rejectAll(0), Workload: &Burst{Clients: 1}, Policy: layeredPolicy(1, 0, 0, sc)}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), `layer "sidecar"`) {
			t.Errorf("%T: %v", s, err)
		}
	}
}

// Orphans draw from streams of their own: a run with orphans and jitter
// is the same twice and whatever GOMAXPROCS.
func TestLayersOrphansDeterministic(t *testing.T) {
	sc := Layer{Name: "sidecar", NoDeadlinePropagation: true, Rules: policies.Policy{Backoff: policies.FullJitter{Base: 20 * time.Millisecond, Factor: 2, Cap: time.Second}, MaxAttempts: 4}}
	cfg := Config{Seed: 7, Server: &ErrorMix{Latency: Exponential{Mean: 80 * time.Millisecond},
		Phases: []MixPhase{{Outcomes: []MixOutcome{{P: 0.6, Reject: Rejection{Status: 503, Class: policies.Capacity}}}}}},
		Workload: &OpenLoop{Rates: ConstantRate(200), Until: 5 * time.Second},
		Policy: Policy{Name: "app", Rules: policies.Policy{Backoff: policies.FullJitter{Base: 10 * time.Millisecond, Factor: 2, Cap: time.Second}, MaxAttempts: 3, AttemptTimeout: 150 * time.Millisecond},
			Layers: []Layer{sc}}}
	var rs []Result
	for _, procs := range []int{1, 2, 1} {
		old := runtime.GOMAXPROCS(procs)
		var x Runner // reused memory must not matter either
		r, err := x.Run(cfg)
		if err == nil && procs == 1 && len(rs) == 2 {
			r, err = x.Run(cfg)
		}
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	if !reflect.DeepEqual(rs[0], rs[1]) || !reflect.DeepEqual(rs[0], rs[2]) {
		t.Error("results differ between runs")
	}
	if got := layerCount(t, rs[0], "layers.after_giveup"); got < 100 {
		t.Errorf("only %d attempts after the caller gave up: the case does not exercise orphans", got)
	}
}

// Orphans' slots are reused once they end: one worker running 50
// operations back to back leaves 100 orphans (2 per operation, each
// living 350 ms past its operation's end), but never more than a few at
// once, and the run keeps only that many slots.
func TestLayersOrphanSlotsReused(t *testing.T) {
	ms := time.Millisecond
	cfg := Config{Seed: 1, Server: rejectAll(100 * ms), Workload: &ClosedLoop{Workers: 1, PerWorker: 50},
		Policy: layeredPolicy(2, 0, 200*ms, sidecar(4, 50*ms, true))}
	cfg = cfg.withLayers()
	var x runner
	r, err := x.run(context.Background(), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := layerCount(t, r, "layers.after_giveup"); got != 200 || r.Attempts != 400 {
		t.Fatalf("%d attempts, %d after the caller gave up; want 400, 200", r.Attempts, got)
	}
	if calls := len(x.server.(*layerState).calls); calls > 4 {
		t.Errorf("%d calls kept for the sidecar's 100 loops: their slots are not reused", calls)
	}
}

// A layer whose coordinator refuses its first attempt answers its caller
// 503: the sidecar's breaker opens after 2 failures (the app's first 2
// attempts, one request each, retried as transient failures), then
// refuses the app's 3rd and 4th attempts without a request; the app
// retries the first refusal as a capacity failure.
func TestLayerRefusalIs503(t *testing.T) {
	sc := sidecar(1, 0, false)
	sc.Coordinators = []machine.Spec{policies.BreakerConfig{ConsecutiveFailures: 2, OpenFor: time.Minute}}
	r, _ := runSends(t, 1, layeredPolicy(4, 10*time.Millisecond, 0, sc))
	if r.Attempts != 2 || layerCount(t, r, "layers.outer.attempts") != 4 ||
		layerCount(t, r, "layers.outer.retries_transient") != 2 || layerCount(t, r, "layers.outer.retries_capacity") != 1 {
		t.Errorf("%d attempts, counters %v; want 2 attempts of 4 app attempts, the app retrying 2 transient failures and 1 refusal", r.Attempts, r.Counters)
	}
}

// Orphans against a server that decides requests later (one row under
// optimistic concurrency, decided when the write arrives): the decisions
// an orphan's requests wait for move to the orphan; every request sent is
// decided, and the run is the same twice.
func TestLayersOrphansDecidedLater(t *testing.T) {
	ms := time.Millisecond
	sc := Layer{Name: "sidecar", NoDeadlinePropagation: true, Rules: policies.Policy{Backoff: policies.Constant{Wait: 5 * ms}, MaxAttempts: 3}}
	cfg := Config{Seed: 3, Server: &Contention{Network: FoldedNormal{Mean: 10 * ms, StdDev: 2 * ms}}, Workload: Burst{Clients: 30},
		Policy: Policy{Name: "app", Rules: policies.Policy{Backoff: policies.Constant{Wait: ms}, MaxAttempts: 3, AttemptTimeout: 15 * ms},
			Layers: []Layer{sc}}}
	var rs []Result
	for range 2 {
		r, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	if !reflect.DeepEqual(rs[0], rs[1]) {
		t.Error("results differ between runs")
	}
	// The orphans' steps are decisions no client waits for.
	var x runner
	detached := 0
	x.trace = func(_ time.Duration, i int32, kind eventKind) {
		if kind == evDetached {
			detached++
		}
	}
	layered := cfg.withLayers()
	if _, err := x.run(context.Background(), &layered); err != nil || detached == 0 {
		t.Errorf("%d detached decisions (%v)", detached, err)
	}
	r := rs[0]
	if r.Admitted+r.Rejected != r.Attempts || layerCount(t, r, "layers.after_giveup") == 0 {
		t.Errorf("%d attempts, %d decided, %d after the caller gave up", r.Attempts, r.Admitted+r.Rejected, layerCount(t, r, "layers.after_giveup"))
	}
}

// A layer abandoned with its caller's attempt tells its coordinators that
// its attempt timed out: the sidecar's breaker (2 failures in a row)
// opens after the app's 150 ms timeout cuts 2 of its 300 ms requests, and
// refuses the app's last 2 attempts.
func TestLayerAbandonedAttemptsReachCoordinators(t *testing.T) {
	slow := &CapacityWindows{ResponseTime: Fixed(300 * time.Millisecond), Phases: []Phase{{Admit: 1000, Window: time.Second, Reject: overloaded}}}
	sc := sidecar(1, 0, false)
	sc.Coordinators = []machine.Spec{policies.BreakerConfig{ConsecutiveFailures: 2, OpenFor: time.Minute}}
	r, err := Run(Config{Seed: 1, Server: slow, Workload: &Burst{Clients: 1}, Policy: layeredPolicy(4, 10*time.Millisecond, 150*time.Millisecond, sc)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Attempts != 2 || r.Completed != 0 {
		t.Errorf("%d attempts, %d completed; want 2 requests, then the open breaker refuses", r.Attempts, r.Completed)
	}
}

// An orphan's own timeouts abandon the layers inside it that receive its
// deadline: the SDK (no propagation, 2 attempts of 200 ms) goes on after
// the app's 250 ms timeout, and its second attempt's end at 400 ms cuts
// the HTTP client inside it (which propagates), whose request sent at
// 350 ms is the only one after the app gave up.
func TestLayersOrphanTimesOutInside(t *testing.T) {
	ms := time.Millisecond
	sdk := layer("sdk", 2, 0, 200*ms)
	sdk.NoDeadlinePropagation = true
	r, sends := runSends(t, 1, layeredPolicy(1, 0, 250*ms, sdk, layer("http", 3, 50*ms, 0)))
	if want := []time.Duration{0, 150 * ms, 200 * ms, 350 * ms}; !reflect.DeepEqual(sends, want) || r.GiveUps[0] != 250*ms {
		t.Errorf("sends at %v, gave up at %v; want %v, 250ms", sends, r.GiveUps, want)
	}
	for name, want := range map[string]int64{"layers.after_giveup": 1, "layers.http.after_giveup": 1, "layers.sdk.after_giveup": 0, "layers.sdk.attempts": 2, "layers.http.attempts_in": 2, "layers.http.attempts": 4} {
		if got := layerCount(t, r, name); got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
}

// Observers name operations, never orphan slots: not when an orphan's own
// attempt times out and orphans the layer inside it (its slot's parent is
// the operation, not the first orphan's slot), and not when a decision
// owed to a finished orphan comes after its slot went to another
// operation's orphan.
func TestLayersObserversNameOperations(t *testing.T) {
	ms := time.Millisecond
	mid := layer("mid", 2, 0, 150*ms)
	mid.NoDeadlinePropagation = true
	r, _ := runSends(t, 2, layeredPolicy(2, 0, 120*ms, mid, sidecar(3, 30*ms, true)))
	if got := layerCount(t, r, "layers.sidecar.after_giveup"); got == 0 {
		t.Fatal("no orphan of an orphan sent anything: the case is not tested")
	}

	// 50 ms of waits, past the app's 30 ms timeout; a request cut at the
	// sidecar's 15 ms is decided later, detached.
	sc := layer("sidecar", 6, 10*ms, 15*ms)
	sc.NoDeadlinePropagation = true
	lifo := &Queue{Concurrency: 1, Service: Exponential{Mean: 20 * ms}, QueueLimit: 4, LIFO: AdaptiveLIFO{Interval: 20 * ms}}
	sends, decisions := map[int]int{}, map[int]int{}
	r, err := Run(Config{Seed: 1, Server: lifo, Workload: &OpenLoop{Rates: ConstantRate(100), Until: 2 * time.Second},
		Policy: layeredPolicy(3, ms, 30*ms, sc),
		Observer: Observer{
			OnSend:     func(_ time.Duration, op int, _ bool) { sends[op]++ },
			OnDecision: func(_ time.Duration, op int, _ policies.Class) { decisions[op]++ },
		}})
	if err != nil {
		t.Fatal(err)
	}
	if layerCount(t, r, "layers.after_giveup") == 0 || r.Attempts != r.Admitted+r.Rejected {
		t.Fatalf("%d attempts, %d decided, %d after a caller gave up: the case is not tested (%v)", r.Attempts, r.Admitted+r.Rejected, layerCount(t, r, "layers.after_giveup"), r.Counters)
	}
	for op, n := range sends {
		if op >= r.Clients || decisions[op] != n {
			t.Errorf("operation %d of %d: %d sends, %d decisions", op, r.Clients, n, decisions[op])
		}
	}
}
