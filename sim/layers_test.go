package sim

import (
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
)

func layer(name string, attempts int, wait, timeout time.Duration) Layer {
	return Layer{Name: name, Rules: policies.Policy{Backoff: policies.Constant{Wait: wait}, MaxAttempts: attempts, AttemptTimeout: timeout}}
}

func layeredPolicy(attempts int, wait, timeout time.Duration, ls ...Layer) Policy {
	return Policy{Name: "app", Rules: policies.Policy{Backoff: policies.Constant{Wait: wait}, MaxAttempts: attempts, AttemptTimeout: timeout}, Layers: ls}
}

func runLayers(t *testing.T, server ServerModel, clients int, p Policy) Result {
	t.Helper()
	r, err := Run(Config{Seed: 1, Server: server, Workload: &Burst{Clients: clients}, Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Retry layers multiply: against a server that always fails, an operation
// sends the product of its layers' max attempts, and each layer's
// attempts are the product of its own and those around it (3 × 3 = 9; the
// reported 3 streaming × 3 SDK × 5 HTTP = 45 per user action).
func TestLayersMultiplyAttempts(t *testing.T) {
	for _, tt := range []struct {
		outer  int
		layers []int
	}{{1, nil}, {3, []int{3}}, {3, []int{3, 5}}, {2, []int{1, 4}}, {1, []int{1, 1, 1}}} {
		var ls []Layer
		for k, n := range tt.layers {
			ls = append(ls, layer(string(rune('a'+k)), n, time.Millisecond, 0))
		}
		r := runLayers(t, rejectAll(10*time.Millisecond), 4, layeredPolicy(tt.outer, time.Millisecond, 0, ls...))
		want, level := tt.outer, tt.outer
		for k, n := range tt.layers {
			if got, _ := r.Counters.Get("layers." + ls[k].Name + ".attempts"); got != int64(4*level*n) {
				t.Errorf("%d×%v: layer %s made %d attempts, want %d", tt.outer, tt.layers, ls[k].Name, got, 4*level*n)
			}
			level *= n
			want *= n
		}
		if r.Attempts != 4*want || r.GaveUp != 4 || r.GaveUpBy[policies.StopAttempts] != 4 {
			t.Errorf("%d×%v: %d attempts, %d gave up (%v); want %d attempts", tt.outer, tt.layers, r.Attempts, r.GaveUp, r.GaveUpBy, 4*want)
		}
		if len(tt.layers) > 0 {
			if got, _ := r.Counters.Get("layers.outer.attempts"); got != int64(4*tt.outer) {
				t.Errorf("%d×%v: outer attempts %d", tt.outer, tt.layers, got)
			}
		}
	}
}

// A success ends every layer at once; an outcome the inner layer does not
// retry (a terminal 400) reaches the outer layer, which does not retry it
// either.
func TestLayersStopOnSuccessAndTerminal(t *testing.T) {
	ms := time.Millisecond
	// Fails until 1 s, then admits: the inner layer's 3 attempts (0, 410,
	// 820 ms) fail; the outer retries at 1030 ms and its first inner
	// attempt succeeds.
	recovering := &CapacityWindows{ResponseTime: Fixed(10 * ms), Phases: []Phase{
		{Duration: time.Second, Reject: Rejection{Status: 503, Class: policies.Capacity}}, {Admit: 100, Window: time.Second, Reject: overloaded}}}
	r := runLayers(t, recovering, 1, layeredPolicy(3, 200*ms, 0, layer("sdk", 3, 400*ms, 0)))
	if r.Attempts != 4 || r.Completed != 1 || r.Latencies[0] != 1040*ms {
		t.Errorf("recovering: %d attempts, %d completed at %v; want 4, 1 at 1.04s", r.Attempts, r.Completed, r.Latencies)
	}
	terminal := &CapacityWindows{ResponseTime: Fixed(10 * ms), Phases: []Phase{{Reject: Rejection{Status: 400, Class: policies.Terminal}}}}
	r = runLayers(t, terminal, 1, layeredPolicy(3, 0, 0, layer("sdk", 3, 0, 0)))
	if r.Attempts != 1 || r.GaveUp != 1 {
		t.Errorf("terminal: %d attempts, %d gave up; want 1, 1", r.Attempts, r.GaveUp)
	}
}

// Each layer's attempt timeout bounds its whole attempt, inner waits and
// requests included: the outer layer's 450 ms cuts the inner loop (a
// request every 200 ms) during its third request, which the client stops
// waiting for.
func TestLayersOuterTimeoutCutsTheInnerLoop(t *testing.T) {
	ms := time.Millisecond
	p := layeredPolicy(2, 0, 450*ms, layer("sdk", 10, 100*ms, 0))
	var sends []time.Duration
	cfg := Config{Seed: 1, Server: rejectAll(100 * ms), Workload: &Burst{Clients: 1}, Policy: p,
		Observer: Observer{OnSend: func(at time.Duration, _ int, _ bool) { sends = append(sends, at) }}}
	r, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{0, 200 * ms, 400 * ms, 450 * ms, 650 * ms, 850 * ms}
	if !reflect.DeepEqual(sends, want) || r.GaveUp != 1 || r.GiveUps[0] != 900*ms {
		t.Errorf("sends at %v, gave up %d at %v; want sends at %v, a give-up at 900ms", sends, r.GaveUp, r.GiveUps, want)
	}
	// The inner layer's own timeout cuts only its attempt: 150 ms
	// requests, a 120 ms timeout, 3 attempts per outer attempt.
	p = layeredPolicy(2, 0, 0, layer("sdk", 3, 0, 120*ms))
	r = runLayers(t, rejectAll(150*ms), 1, p)
	if r.Attempts != 6 || r.GiveUps[0] != 720*ms {
		t.Errorf("inner timeout: %d attempts, gave up at %v; want 6 at 720ms", r.Attempts, r.GiveUps)
	}
}

func TestLayersValidate(t *testing.T) {
	ok := layer("sdk", 3, 0, 0)
	for _, ls := range [][]Layer{
		{{Name: "", Rules: ok.Rules}},
		{{Name: "outer", Rules: ok.Rules}},
		{ok, ok},
		{{Name: "x", Rules: policies.Policy{Backoff: policies.Constant{}}}},
		{{Name: "x", Rules: policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 2, Deadline: time.Second}}},
	} {
		cfg := Config{Server: rejectAll(0), Workload: &Burst{Clients: 1}, Policy: layeredPolicy(1, 0, 0, ls...)}
		if err := cfg.Validate(); err == nil {
			t.Errorf("%+v: accepted", ls)
		}
	}
}

// A layered run is the same whatever GOMAXPROCS.
func TestLayersDeterministic(t *testing.T) {
	cfg := Config{Seed: 5, Server: &ErrorMix{Latency: Exponential{Mean: 20 * time.Millisecond},
		Phases: []MixPhase{{Outcomes: []MixOutcome{{P: 0.5, Reject: Rejection{Status: 503, Class: policies.Capacity}}}}}},
		Workload: &OpenLoop{Rates: ConstantRate(200), Until: 5 * time.Second},
		Policy: Policy{Name: "app", Rules: policies.Policy{Backoff: policies.FullJitter{Base: 10 * time.Millisecond, Factor: 2, Cap: time.Second}, MaxAttempts: 3, AttemptTimeout: 300 * time.Millisecond},
			Layers: []Layer{{Name: "sdk", Rules: policies.Policy{Backoff: policies.FullJitter{Base: 5 * time.Millisecond, Factor: 2, Cap: 100 * time.Millisecond}, MaxAttempts: 3}}}}}
	var rs []Result
	for _, procs := range []int{1, 2} {
		old := runtime.GOMAXPROCS(procs)
		r, err := Run(cfg)
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	if !reflect.DeepEqual(rs[0], rs[1]) {
		t.Error("results differ with GOMAXPROCS")
	}
	if rs[0].Amplification() <= 1.5 {
		t.Errorf("amplification %v: the layers hardly retried", rs[0].Amplification())
	}
}
