package sim

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime/debug"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"

	"github.com/retrysim/retrysim/internal/racetest"
)

// refEvent is what the reference queue holds: the full (at, seq) key.
type refEvent struct {
	at     time.Duration
	seq    uint64
	client int32
}

// TestQueueOrder pushes and pops at random, through both entry points,
// and checks every pop against a reference that sorts by (at, seq).
func TestQueueOrder(t *testing.T) {
	for _, limit := range []uint64{0, 7, 100} {
		rng := rand.New(rand.NewPCG(1, limit))
		const clients = 50
		var q queue
		q.init(clients, 4) // small, so that the heap must grow
		lowerMaxSeq(&q, limit)
		var ref []refEvent
		var seq uint64
		now := time.Duration(0)
		pending := map[int32]bool{}
		for step := 0; step < 20000; step++ {
			if len(ref) > 0 && (rng.IntN(2) == 0 || len(pending) == clients) {
				at, c := q.pop()
				slices.SortFunc(ref, func(a, b refEvent) int {
					return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq))
				})
				want := ref[0]
				ref = ref[1:]
				if at != want.at || c != want.client {
					t.Fatalf("limit %d, step %d: popped (%v, client %d), want (%v, client %d)", limit, step, at, c, want.at, want.client)
				}
				now = at
				delete(pending, c)
				continue
			}
			c := int32(rng.IntN(clients))
			if pending[c] {
				continue
			}
			pending[c] = true
			// Few distinct times, so that ties are common.
			at := now + time.Duration(rng.IntN(5))*time.Millisecond
			if rng.IntN(2) == 0 {
				q.pushInOrder(at, c)
			} else {
				q.push(at, c)
			}
			ref = append(ref, refEvent{at, seq, c})
			seq++
			if q.len() != len(ref) {
				t.Fatalf("len %d, want %d", q.len(), len(ref))
			}
		}
	}
}

func TestQueuePopsInTimeOrder(t *testing.T) {
	var q queue
	q.init(6, 0)
	for i, at := range []time.Duration{5, 1, 4, 1, 3, 2} {
		q.push(at, int32(i))
	}
	var got []time.Duration
	for q.len() > 0 {
		at, _ := q.pop()
		got = append(got, at)
	}
	if want := []time.Duration{1, 1, 2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Fatalf("popped times %v, want %v", got, want)
	}
}

func TestQueueBreaksTiesByInsertionOrder(t *testing.T) {
	var q queue
	q.init(64, 0)
	// Same time for all; clients pushed in a scrambled order, through both
	// entry points.
	order := []int32{7, 3, 9, 0, 5}
	for i, c := range order {
		if i%2 == 0 {
			q.push(time.Second, c)
		} else {
			q.pushInOrder(time.Second, c)
		}
	}
	q.push(time.Millisecond, 42) // earlier time jumps the queue
	if _, c := q.pop(); c != 42 {
		t.Fatalf("first popped client %d, want 42", c)
	}
	for i, want := range order {
		if _, c := q.pop(); c != want {
			t.Fatalf("tie %d: popped client %d, want %d (insertion order)", i, c, want)
		}
	}
}

// TestRenumberKeepsRuns runs scenarios with sequence numbers so narrow that
// the queue renumbers its events over and over, and checks that the results
// are those of a normal run.
func TestRenumberKeepsRuns(t *testing.T) {
	for _, cfg := range []Config{hugeBurst(300), gatedConfig(200)} {
		want, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		limit := uint64(cfg.Workload.Operations()) + 3
		narrowCfg := withMaxSeq(cfg, limit)
		var narrow runner
		got, err := narrow.run(context.Background(), &narrowCfg)
		if err != nil {
			t.Fatal(err)
		}
		// The seam reached the queue, and the run passed its limit.
		if q := &narrow.q; q.maxSeq != limit || uint64(got.Events) <= 2*limit {
			t.Fatalf("%s: the queue's largest sequence number is %d, want %d; %d events", cfg.Policy.Name, q.maxSeq, limit, got.Events)
		}
		if !slices.Equal(got.Latencies, want.Latencies) || got.Attempts != want.Attempts || got.Events != want.Events || got.GaveUpBy != want.GaveUpBy {
			t.Errorf("%s: renumbering changed the run: %d attempts, %d events; want %d, %d", cfg.Policy.Name, got.Attempts, got.Events, want.Attempts, want.Events)
		}
	}
}

// gatedConfig is a rate-limited server with a gated, throttled policy and
// clients spread over 2 s: every event kind and both queue entry points.
func gatedConfig(n int) Config {
	return Config{
		Seed: 3,
		Server: &CapacityWindows{
			ResponseTime: Fixed(200 * time.Millisecond),
			Phases: []Phase{{Admit: 10, Window: time.Second,
				Reject: Rejection{Status: 429, Class: policies.RetryAfter, RetryAfter: time.Second}}},
		},
		Workload: Burst{Clients: n, Spread: 2 * time.Second},
		Policy: Policy{Name: "gated", Coordinators: []machine.Spec{machine.GateConfig{}, machine.ThrottleConfig{Count: 10, Per: time.Second}},
			Rules: policies.Policy{
				Backoff:     policies.FullJitter{Base: 500 * time.Millisecond, Factor: 2, Cap: 8 * time.Second},
				MaxAttempts: 10,
				Deadline:    time.Minute,
			}},
	}
}

// TestNoAllocationPerEvent checks that a run's allocations do not grow with
// the number of events: ten times the clients and events, same allocations.
func TestNoAllocationPerEvent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 20,000 clients")
	}
	if racetest.Enabled {
		t.Skip("allocation counts are the plain build's; the plain go test runs this")
	}
	// Garbage collection off while counting: a collection cycle may itself
	// allocate a few objects, which would blur an exact comparison.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	// Every control on: gate, throttle, in-flight limit, fallback, circuit
	// breaker, adaptive throttling and the three retry budgets, set so that
	// each keeps deciding throughout the run rather than stopping everyone
	// (a shorter outage, so that most operations complete).
	controlled := func(n int) Config {
		c := hugeBurst(n)
		c.Server.(*CapacityWindows).Phases[0].Duration = 3 * time.Second
		c.Policy.Coordinators = []machine.Spec{machine.GateConfig{}, machine.ThrottleConfig{Count: max(n/10, 1), Per: time.Second}, machine.LimitConfig{MaxInFlight: max(n/20, 1)},
			policies.BreakerConfig{FailureRatio: 1, MinRequests: n / 2, OpenFor: time.Second, Probes: 3},
			policies.AdaptiveThrottleConfig{K: 0.99, Rejections: policies.Classes(policies.Terminal)},
			policies.RetryThrottlingConfig{MaxTokens: 1000, TokenRatio: 1},
			policies.RatioBudgetConfig{Percent: 300},
			policies.RetryQuotaConfig{Capacity: 5 * n},
			policies.CubicRateConfig{ThrottleOnCapacity: true}}
		c.Policy.Fallback = &Fallback{After: 2}
		return c
	}
	models := map[string]func(int) Config{"plain": hugeBurst, "every control": controlled,
		"queue, open loop": openQueue, "error mix, closed loop": closedMix, "rate limit, sessions": limitedSessions}
	for name, config := range models {
		allocs := func(n int) (float64, int) {
			cfg := config(n)
			var events int
			a := testing.AllocsPerRun(2, func() {
				r, err := Run(cfg)
				if err != nil {
					t.Fatal(err)
				}
				events = r.Events
			})
			return a, events
		}
		small, smallEvents := allocs(2_000)
		large, largeEvents := allocs(20_000)
		if largeEvents < 5*smallEvents {
			t.Fatalf("%s: events %d and %d: the larger run should have many more", name, smallEvents, largeEvents)
		}
		// Ten times the events may add a few allocations where a buffer
		// grows by doubling (the limiter's queue), never one per event.
		if large > small+16 {
			t.Errorf("%s: allocations per run: %v with %d events, %v with %d events; want about the same (none per event)", name, small, smallEvents, large, largeEvents)
		}
	}
}

// TestRunnerReuse runs configurations of different sizes and kinds through
// one Runner and checks each result against a fresh Run.
func TestRunnerReuse(t *testing.T) {
	var runner Runner
	for _, cfg := range []Config{hugeBurst(2000), gatedConfig(300), hugeBurst(50), gatedConfig(3000), hugeBurst(2000)} {
		want, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := runner.Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Latencies, want.Latencies) || got.Attempts != want.Attempts || got.Events != want.Events ||
			got.GaveUpBy != want.GaveUpBy || got.Admitted != want.Admitted || got.Retries != want.Retries {
			t.Errorf("%s, %d clients: reused runner gave %d attempts, %d events; fresh run %d, %d",
				cfg.Policy.Name, cfg.Workload.Operations(), got.Attempts, got.Events, want.Attempts, want.Events)
		}
	}
	if _, err := runner.Run(Config{}); err == nil {
		t.Error("invalid config accepted")
	}
}

// TestOperationLayout checks what newOperations relies on: an operation is
// one 64-byte cache line and holds no pointers (so that its slice may start
// anywhere in a pointer-free allocation), and the slice is 64-byte aligned.
func TestOperationLayout(t *testing.T) {
	if s := unsafe.Sizeof(operation{}); s != cacheLine {
		t.Errorf("operation is %d bytes, want %d", s, cacheLine)
	}
	var walk func(reflect.Type) bool
	walk = func(ty reflect.Type) bool {
		switch ty.Kind() {
		case reflect.Pointer, reflect.UnsafePointer, reflect.Map, reflect.Chan, reflect.Func,
			reflect.Interface, reflect.Slice, reflect.String:
			return true
		case reflect.Array:
			return ty.Len() > 0 && walk(ty.Elem())
		case reflect.Struct:
			for i := range ty.NumField() {
				if walk(ty.Field(i).Type) {
					return true
				}
			}
		}
		return false
	}
	if walk(reflect.TypeFor[operation]()) {
		t.Error("operation holds a pointer: newOperations must not offset its slice")
	}
	for _, n := range []int{1, 3, 20, 1000, 100_000} {
		ops := newOperations(n)
		if len(ops) != n || cap(ops) != n {
			t.Errorf("newOperations(%d): len %d, cap %d", n, len(ops), cap(ops))
		}
		if a := uintptr(unsafe.Pointer(&ops[0])) % cacheLine; a != 0 {
			t.Errorf("newOperations(%d) starts %d bytes past a cache line", n, a)
		}
	}
}

// A detached decision keeps its place among the events at its time, also
// when the sequence is renumbered.
func TestDetachedDecisionsKeepTheirPlace(t *testing.T) {
	for _, renumber := range []bool{false, true} {
		var q queue
		q.init(4, 4)
		q.push(1, 0) // takes sequence number 0, so renumbering changes the others
		q.pop()
		q.pushDetached(10, 3, 7)
		q.push(10, 0)
		q.pushDetached(5, 2, 8)
		q.push(10, 1)
		if renumber {
			q.renumber()
		}
		var order []string
		for q.len() > 0 || len(q.detached) > 0 {
			if len(q.detached) > 0 && q.detachedFirst() {
				at, op, ticket := q.popDetached()
				order = append(order, fmt.Sprintf("%v:detached %d/%d", at, op, ticket))
				continue
			}
			at, op := q.pop()
			order = append(order, fmt.Sprintf("%v:%d", at, op))
		}
		want := []string{"5ns:detached 2/8", "10ns:detached 3/7", "10ns:0", "10ns:1"}
		if !slices.Equal(order, want) {
			t.Errorf("renumbered %v: order %v, want %v", renumber, order, want)
		}
	}
}
