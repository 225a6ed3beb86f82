package scenarios

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/sim"
)

const poolServer = `    server:
      type: pool
      balancer: least-outstanding
      eject: {consecutive: 3, for: 2s}
      members:
        - name: a
          server:
            type: crash
            down: [{from: 5s, until: 10s}, {from: 20s, until: 21s}]
            inner: {type: queue, concurrency: 5, service: {exponential: 100ms}}
        - name: b
          server: {type: queue, concurrency: 5, service: {exponential: 100ms}}
`

// A pool of a crashing queue and a queue decodes into the sim models, with
// the metrics they count, a clone that changes alone, and the down_for
// sweep parameter.
func TestPoolAndCrashDecode(t *testing.T) {
	s := parseOne(t, withModels(poolServer, burstClients))
	p, ok := s.Server.(*sim.Pool)
	if !ok {
		t.Fatalf("server %T", s.Server)
	}
	if p.Balancer != sim.LeastOutstanding || p.Ejection != (sim.Ejection{Consecutive: 3, For: 2 * time.Second}) || len(p.Members) != 2 {
		t.Fatalf("pool %+v", p)
	}
	c, ok := p.Members[0].Server.(*sim.Crash)
	if !ok || len(c.Down) != 2 || c.Down[1] != (sim.DownWindow{From: 20 * time.Second, Until: 21 * time.Second}) {
		t.Fatalf("member a %+v", p.Members[0].Server)
	}
	if _, ok := c.Inner.(*sim.Queue); !ok {
		t.Fatalf("member a's inner %T", c.Inner)
	}
	var names []string
	for _, m := range s.Metrics() {
		names = append(names, m.Name)
	}
	for _, want := range []string{"pool.busiest_share", "pool.ejections", "crash.reset", "crash.refused", "server.wasted"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("metrics %v lack %s", names, want)
		}
	}
	parts := kinds.Parts{Server: s.Server, Workload: s.Workload, Policies: s.Policies}
	clone := parts.Clone()
	downFor, _ := kinds.LookupParam("down_for")
	if err := downFor.Set(&clone, int64(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	cc := clone.Server.(*sim.Pool).Members[0].Server.(*sim.Crash)
	if cc.Down[0].Until != 8*time.Second || cc.Down[1].Until != 23*time.Second || c.Down[0].Until != 10*time.Second {
		t.Errorf("down_for=3s: clone %v, original %v", cc.Down, c.Down)
	}
	// Windows that would overlap are refused.
	if err := downFor.Set(&clone, int64(16*time.Second)); err == nil {
		t.Error("down_for=16s (overlapping windows) accepted")
	}
	concurrency, _ := kinds.LookupParam("concurrency")
	if err := concurrency.Set(&clone, 7); err != nil {
		t.Fatal(err)
	}
	if q := clone.Server.(*sim.Pool).Members[1].Server.(*sim.Queue); q.Concurrency != 7 {
		t.Errorf("concurrency=7 did not reach member b: %d", q.Concurrency)
	}
	if d := kinds.DescribeServer(s.Server); len(d.Rows) != 2 || !strings.Contains(d.Rows[0][1], "crash") {
		t.Errorf("describe %+v", d)
	}
}

func TestPoolAndCrashErrors(t *testing.T) {
	for _, tt := range []struct{ server, want string }{
		{`    server: {type: pool}
`, "scenarios[0].server.members: missing"},
		{`    server: {type: pool, members: []}
`, "scenarios[0].server.members: the list is empty"},
		{`    server: {type: pool, balancer: fastest, members: [{name: a, server: {phases: [{admit: 1, window: 1s}]}}]}
`, `m.yaml:3:36: scenarios[0].server.balancer: unknown balancer "fastest"; choose one of round-robin, random, least-outstanding, power-of-two`},
		{`    server: {type: pool, members: [{server: {phases: [{admit: 1, window: 1s}]}}]}
`, "scenarios[0].server.members[0].name: missing"},
		{`    server: {type: pool, members: [{name: a, server: {phases: [{admit: 1, window: 1s}]}}, {name: a, server: {phases: [{admit: 1, window: 1s}]}}]}
`, `scenarios[0].server.members[1].name: two members are called "a"`},
		{`    server: {type: pool, members: [{name: "a b", server: {phases: [{admit: 1, window: 1s}]}}]}
`, `m.yaml:3:43: scenarios[0].server.members[0].name: member name "a b": only letters, digits`},
		{`    server: {type: pool, members: [{name: a}]}
`, "scenarios[0].server.members[0].server: missing"},
		{`    server: {type: pool, members: [{name: a, server: {phases: [{admit: 1, window: 1s}]}, weight: 2}]}
`, "scenarios[0].server.members[0].weight: unknown field (known fields: name, server)"},
		{`    server: {type: pool, members: [{name: a, server: {type: queue, service: 1s}}]}
`, "scenarios[0].server.members[0].server.concurrency: missing"},
		{`    server: {type: pool, members: [{name: a, server: {type: contention}}]}
`, "cannot be a pool member"},
		{`    server: {type: pool, members: [{name: a, server: {phases: [{admit: 1, window: 1s}]}}], eject: {for: 0s}}
`, "scenarios[0].server.eject.for: must be > 0"},
		{`    server: {type: pool, members: [{name: a, server: {phases: [{admit: 1, window: 1s}]}}, {name: b, server: {phases: [{admit: 1, window: 1s}]}}], eject: {max_ejected: 2}}
`, "scenarios[0].server.eject.max_ejected: must be between 0 and 1"},
		{`    server: {type: pool, members: [{name: a, server: {phases: [{admit: 1, window: 1s}]}}], cooldown: {allowed_fails: 1, failure_rate: 0.5}}
`, "scenarios[0].server.cooldown.failure_rate: set one of allowed_fails, failure_rate, not both"},
		{`    server: {type: pool, members: [{name: a, server: {phases: [{admit: 1, window: 1s}]}}], cooldown: {}, eject: {}}
`, "scenarios[0].server.cooldown: choose eject or cooldown, not both"},
		{`    server: {type: pool, members: [{name: a, server: {phases: [{admit: 1, window: 1s}]}}], cooldown: {failure_rate: 1}}
`, "scenarios[0].server.cooldown.failure_rate: must be between 0.001 and 0.999"},
		{`    server: {type: crash, inner: {phases: [{admit: 1, window: 1s}]}}
`, "scenarios[0].server.down: missing"},
		{`    server: {type: crash, down: [{from: 5s}], inner: {phases: [{admit: 1, window: 1s}]}}
`, "scenarios[0].server.down[0].until: missing"},
		{`    server: {type: crash, down: [{from: 5s, until: 5s}], inner: {phases: [{admit: 1, window: 1s}]}}
`, "scenarios[0].server.down[0].until: must be after from (5s)"},
		{`    server: {type: crash, down: [{from: 5s, until: 9s}, {from: 8s, until: 10s}], inner: {phases: [{admit: 1, window: 1s}]}}
`, "scenarios[0].server.down[1].from: the window starts before the one before it ends (9s)"},
		{`    server: {type: crash, down: [{from: 5s, until: 9s, at: 1s}], inner: {phases: [{admit: 1, window: 1s}]}}
`, "scenarios[0].server.down[0].at: unknown field (known fields: from, until)"},
		{`    server: {type: crash, down: [{from: 5s, until: 9s}]}
`, "scenarios[0].server.inner: missing"},
	} {
		_, err := Parse("m.yaml", []byte(withModels(tt.server, burstClients)))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v,\nwant %q", tt.server, err, tt.want)
			continue
		}
		if n := strings.Count(err.Error(), "\n") + 1; n != 1 {
			t.Errorf("%s: %d errors for one problem:\n%v", tt.want, n, err)
		}
	}
}

// withLayers is a scenario whose one policy has the given layers field.
func withLayers(layers string) string {
	return `scenarios:
  - name: s
    server: {phases: [{reject: unavailable}]}
    clients: {count: 2}
    policies:
      - name: app
        type: immediate
        max_attempts: 3
        layers: ` + layers + "\n"
}

// A policy's layers decode as policies of their own (presets too), and
// a layer that has what layers do not (a deadline, an in-flight limit, its
// own layers) is an error at its field.
func TestLayersDecode(t *testing.T) {
	s := parseOne(t, withLayers("[{name: sdk, type: anthropic-sdk}, {name: sidecar, type: immediate, delay: 0s, max_attempts: 5, attempt_timeout: 2s}]"))
	ls := s.Policies[0].Layers
	if len(ls) != 2 || ls[0].Name != "sdk" || ls[0].Rules.MaxAttempts != 3 || ls[1].Rules.AttemptTimeout != 2*time.Second {
		t.Fatalf("layers %+v", ls)
	}
	if d := kinds.DescribeCoordination(&s.Policies[0]); !strings.Contains(d, "retry layers inside: sdk (3 attempts") {
		t.Errorf("describe: %s", d)
	}
	for _, tt := range []struct{ layers, want string }{
		{"[]", "scenarios[0].policies[0].layers: the list is empty"},
		{"[{name: sdk, type: immediate}]", "scenarios[0].policies[0].layers[0].max_attempts: set max_attempts or deadline"},
		{"[{name: sdk, type: immediate, max_attempts: 2, deadline: 1s}]", "scenarios[0].policies[0].layers[0].deadline: an inner layer has no deadline"},
		{"[{name: sdk, type: immediate, max_attempts: 2, max_in_flight: 2}]", "scenarios[0].policies[0].layers[0].max_in_flight: an inner layer's coordinators must not queue"},
		{"[{name: sdk, type: immediate, max_attempts: 2, layers: [{name: x, type: immediate, max_attempts: 2}]}]", "scenarios[0].policies[0].layers[0].layers: list every layer"},
		{"[{name: sdk, type: immediate, max_attempts: 2}, {name: sdk, type: immediate, max_attempts: 2}]", `scenarios[0].policies[0].layers[1].name: two layers are called "sdk"`},
		{"[{name: outer, type: immediate, max_attempts: 2}]", `scenarios[0].policies[0].layers[0].name: "outer" names the policy's own layer`},
		{"[{name: sdk, type: immediate, max_attempts: 2, retries: 3}]", "scenarios[0].policies[0].layers[0].retries: unknown field"},
	} {
		_, err := Parse("m.yaml", []byte(withLayers(tt.layers)))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v,\nwant %q", tt.layers, err, tt.want)
			continue
		}
		if n := strings.Count(err.Error(), "\n") + 1; n != 1 {
			t.Errorf("%s: %d errors for one problem:\n%v", tt.want, n, err)
		}
	}
}

// A cooldown decodes by count or by rate, LiteLLM's defaults (rate 0.5, 5 s)
// for an empty mapping.
func TestPoolCooldownDecode(t *testing.T) {
	for _, tt := range []struct {
		field string
		want  sim.Cooldown
	}{
		{"{}", sim.Cooldown{FailureRate: 0.5, For: 5 * time.Second}},
		{"{allowed_fails: 3, for: 10s}", sim.Cooldown{AllowedFails: 3, For: 10 * time.Second}},
		{"{failure_rate: 0.2}", sim.Cooldown{FailureRate: 0.2, For: 5 * time.Second}},
	} {
		s := parseOne(t, withModels("    server: {type: pool, members: [{name: a, server: {phases: [{admit: 1, window: 1s}]}}], cooldown: "+tt.field+"}\n", burstClients))
		if got := s.Server.(*sim.Pool).Cooldown; got != tt.want {
			t.Errorf("cooldown %s: %+v, want %+v", tt.field, got, tt.want)
		}
	}
}

// A mixture distribution decodes part by part, any distribution in each;
// its errors name the part's field.
func TestMixtureDecode(t *testing.T) {
	s := parseOne(t, withModels("    server: {type: queue, concurrency: 2, service: {mixture: [{p: 0.99, draw: {exponential: 1ms}}, {p: 0.01, draw: 100ms}]}}\n", burstClients))
	m, ok := s.Server.(*sim.Queue).Service.(*sim.Mixture)
	if !ok || len(m.Parts) != 2 || m.Parts[1].Draw != sim.Fixed(100*time.Millisecond) || m.Parts[0].P != 0.99 {
		t.Fatalf("service %+v", s.Server.(*sim.Queue).Service)
	}
	if got := kinds.MinResponse(s.Server); got != 0 {
		t.Errorf("min response %v, want 0 (exponential)", got)
	}
	for _, tt := range []struct{ service, want string }{
		{"{mixture: []}", "scenarios[0].server.service.mixture: want 1 to 64 parts"},
		{"{mixture: [{p: 0.5, draw: 1ms}]}", "scenarios[0].server.service.mixture: the probabilities add up to 0.5, not 1"},
		{"{mixture: [{p: 1}]}", "scenarios[0].server.service.mixture[0].draw: missing"},
		{"{mixture: [{p: 1, draw: {gamma: 1s}}]}", "scenarios[0].server.service.mixture[0].draw.gamma: unknown field"},
		{"{mixture: [{p: 1, draw: 1ms, weight: 2}]}", "scenarios[0].server.service.mixture[0].weight: unknown field (known fields: p, draw)"},
		{"{mixture: [{p: 2, draw: 1ms}]}", "scenarios[0].server.service.mixture[0].p: must be between 0 and 1"},
	} {
		_, err := Parse("m.yaml", []byte(withModels("    server: {type: queue, concurrency: 2, service: "+tt.service+"}\n", burstClients)))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v,\nwant %q", tt.service, err, tt.want)
			continue
		}
		if n := strings.Count(err.Error(), "\n") + 1; n != 1 {
			t.Errorf("%s: %d errors for one problem:\n%v", tt.want, n, err)
		}
	}
}

// A queue's codel field: Facebook's values and the rule at dequeue by
// default, each rule by name, errors at the field (line and column too).
func TestQueueCoDelDecode(t *testing.T) {
	s := parseOne(t, withModels("    server: {type: queue, concurrency: 2, service: 1s, codel: {}, reject: unavailable}\n", burstClients))
	if q := s.Server.(*sim.Queue); q.CoDel != (sim.CoDel{Target: 5 * time.Millisecond, Interval: 100 * time.Millisecond, Rule: sim.CoDelAtDequeue}) || q.Reject.Status != 503 {
		t.Fatalf("queue %+v", q)
	}
	for name, rule := range map[string]sim.CoDelRule{"dequeue": sim.CoDelAtDequeue, "arrival": sim.CoDelAtArrival, "control-law": sim.CoDelControlLaw} {
		s := parseOne(t, withModels("    server: {type: queue, concurrency: 2, service: 1s, codel: {rule: "+name+"}}\n", burstClients))
		if got := s.Server.(*sim.Queue).CoDel.Rule; got != rule {
			t.Errorf("rule %s: %d, want %d", name, got, rule)
		}
	}
	for _, tt := range []struct{ codel, want string }{
		{"{target: 0s}", "scenarios[0].server.codel.target: must be > 0"},
		{"{target: 10ms, interval: 5ms}", "scenarios[0].server.codel.interval: must be at least the target (10ms)"},
		{"{delay: 5ms}", "scenarios[0].server.codel.delay: unknown field (known fields: target, interval, rule)"},
		{"{rule: arival}", `scenarios[0].server.codel.rule: unknown rule "arival" (did you mean "arrival"?)`},
		{"{rule: 3}", `scenarios[0].server.codel.rule: want a string, got number "3"`},
	} {
		_, err := Parse("m.yaml", []byte(withModels("    server: {type: queue, concurrency: 2, service: 1s, codel: "+tt.codel+"}\n", burstClients)))
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "m.yaml:") {
			t.Errorf("%s: err = %v,\nwant %q", tt.codel, err, tt.want)
		}
	}
}

func TestBillingDecode(t *testing.T) {
	s := parseOne(t, withModels("    server: {type: billing, per_request: 0.01, bill_abandoned: false, inner: {phases: [{admit: 1, window: 1s}]}}\n", burstClients))
	if b := s.Server.(*sim.Billing); b.PerRequest != 0.01 || b.BillAbandoned {
		t.Fatalf("billing %+v", b)
	}
	for _, tt := range []struct{ server, want string }{
		{"{type: billing, inner: {phases: [{admit: 1, window: 1s}]}}", "scenarios[0].server.per_request: missing: set at least one price"},
		{"{type: billing, per_request: -1, inner: {phases: [{admit: 1, window: 1s}]}}", "scenarios[0].server.per_request: must be between 0 and 1000"},
		{"{type: billing, per_request: 1}", "scenarios[0].server.inner: missing"},
		{"{type: billing, per_request: 1, inner: {type: contention}}", "cannot be billed"},
	} {
		_, err := Parse("m.yaml", []byte(withModels("    server: "+tt.server+"\n", burstClients)))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v,\nwant %q", tt.server, err, tt.want)
		}
	}
}

// Brooker's published numbers at failure probability 0.5 ("Fixing
// retries with token buckets and circuit breakers": adaptive 1.14× load,
// 57% success; the retry breaker 1.00×, 50%), and 3 retries' theory (1.875×,
// 93.75%), as means over seeds 1–20 of the built-in brooker-retry-controls.
func TestBrookerRetryControlsReproduce(t *testing.T) {
	f, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.Lookup("brooker-retry-controls")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]float64{"retries-3": {1.875, 0.9375}, "adaptive": {1.14, 0.57}, "breaker": {1.00, 0.50}}
	seeds, tol := 20, 0.01
	if racetest.Enabled {
		seeds, tol = 2, 0.02 // a single-goroutine loop: the race detector only slows it
	}
	for i, p := range s.Policies {
		var load, success float64
		for seed := uint64(1); seed <= uint64(seeds); seed++ {
			r, err := sim.Run(s.Config(i, seed))
			if err != nil {
				t.Fatal(err)
			}
			load += r.Amplification() / float64(seeds)
			success += float64(r.Completed) / float64(r.Clients) / float64(seeds)
		}
		w := want[p.Name]
		if math.Abs(load-w[0]) > tol || math.Abs(success-w[1]) > tol {
			t.Errorf("%s: load %.3f×, success %.1f%%; want %.2f×, %.1f%% (±%v)", p.Name, load, 100*success, w[0], 100*w[1], tol)
		}
	}
}
