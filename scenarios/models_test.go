package scenarios

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
)

// withModels is valid with its server and clients replaced.
func withModels(server, clients string) string {
	src := strings.Replace(valid, `    server:
      phases:
        - duration: 2s
          reject: overloaded
        - admit: 6
          window: 1s
`, server, 1)
	return strings.Replace(src, `    clients:
      count: 20
      max_attempts: 8
      deadline: 20s
`, clients, 1)
}

const burstClients = `    clients:
      count: 20
      max_attempts: 8
      deadline: 20s
`

func parseOne(t *testing.T, src string) *Scenario {
	t.Helper()
	f, err := Parse("m.yaml", []byte(src))
	if err != nil {
		t.Fatalf("%v\nin\n%s", err, src)
	}
	return f.Scenarios[0]
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestServerKindsDecode(t *testing.T) {
	for _, tt := range []struct {
		name, server string
		want         sim.ServerModel
		metrics      []string
	}{
		{"queue", `    server:
      type: queue
      phases:
        - {duration: 20s, concurrency: 10}
        - {concurrency: 5}
      service: {exponential: 100ms}
      queue_limit: 50
      reject: unavailable
      reject_after: 10ms
      drop_abandoned: true
`, &sim.Queue{Phases: []sim.WorkerPhase{{Duration: 20 * time.Second, Concurrency: 10}, {Concurrency: 5}},
			Service: sim.Exponential{Mean: ms(100)}, QueueLimit: 50, Reject: sim.Rejection{Status: 503, Class: policies.Capacity},
			RejectAfter: ms(10), DropAbandoned: true},
			[]string{"server.wasted", "server.wasted_ms", "server.dropped", "server.queue_full"}},
		{"queue of fixed workers", `    server: {type: queue, concurrency: 4, service: 50ms}
`, &sim.Queue{Concurrency: 4, Service: sim.Fixed(ms(50)), Reject: sim.Rejection{Status: 529, Class: policies.Capacity}},
			[]string{"server.wasted", "server.wasted_ms"}},
		{"error mix", `    server:
      type: error-mix
      response_time: {lognormal: {median: 1s, p99: 10s}}
      fail_response_time: {uniform: [50ms, 150ms]}
      failures:
        - {probability: 0.1, reject: server-error}
        - {probability: 0.05, reject: rate-limited, retry_after: 2s}
`, &sim.ErrorMix{Latency: sim.LogNormal{Median: time.Second, P99: 10 * time.Second}, FailLatency: sim.Uniform{Min: ms(50), Max: ms(150)},
			Phases: []sim.MixPhase{{Outcomes: []sim.MixOutcome{
				{P: 0.1, Reject: sim.Rejection{Status: 500, Class: policies.Transient}},
				{P: 0.05, Reject: sim.Rejection{Status: 429, Class: policies.RetryAfter, RetryAfter: 2 * time.Second}}}}}},
			nil},
		{"error mix in phases, streamed", `    server:
      type: error-mix
      response_time: {fixed: 2s}
      stream: true
      stream_share: 0.5
      output_tokens: 800
      phases:
        - duration: 10s
        - failures: [{probability: 0.2}]
`, &sim.ErrorMix{Latency: sim.Fixed(2 * time.Second), Stream: true, StreamShare: 0.5, OutputTokens: 800,
			Phases: []sim.MixPhase{{Duration: 10 * time.Second}, {Outcomes: []sim.MixOutcome{{P: 0.2, Reject: sim.Rejection{Status: 529, Class: policies.Capacity}}}}}},
			[]string{"server.wasted", "server.wasted_ms", "server.wasted_output_tokens"}},
		{"rate limit", `    server:
      type: rate-limit
      requests_per_minute: 60
      input_tokens_per_minute: 100000
      input_tokens: 1000
      retry_after_unit: 1s
      retry_after_growth: 1.5
      max_retry_after: 2m
      inner:
        type: queue
        concurrency: 2
        service: 1s
`, &sim.RateLimit{RequestsPerMinute: 60, InputTokensPerMinute: 100000, InputTokens: 1000, RetryAfterUnit: time.Second, RetryAfterGrowth: 1.5, MaxRetryAfter: 2 * time.Minute,
			Inner: &sim.Queue{Concurrency: 2, Service: sim.Fixed(time.Second), Reject: sim.Rejection{Status: 529, Class: policies.Capacity}}},
			[]string{"server.wasted", "server.wasted_ms", "server.rate_limited", "server.too_large", "server.key_idle_ms", "server.key_utilisation", "client.idle_ms"}},
		{"contention", `    server: {type: contention, network: {normal: {mean: 20ms, stddev: 5ms}}}
`, &sim.Contention{Network: sim.FoldedNormal{Mean: ms(20), StdDev: ms(5)}},
			[]string{"server.reads", "server.writes", "server.conflicts"}},
		{"contention by default", `    server: {type: contention}
`, &sim.Contention{Network: sim.FoldedNormal{Mean: ms(10), StdDev: ms(2)}},
			[]string{"server.reads", "server.writes", "server.conflicts"}},
		{"capacity windows by type", `    server: {type: capacity-windows, response_time: {exponential: 50ms}, phases: [{admit: 3, window: 1s}]}
`, &sim.CapacityWindows{ResponseTime: sim.Exponential{Mean: ms(50)}, Phases: []sim.Phase{{Admit: 3, Window: time.Second,
			Reject: sim.Rejection{Status: 529, Class: policies.Capacity}}}}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := parseOne(t, withModels(tt.server, burstClients))
			if !reflect.DeepEqual(s.Server, tt.want) {
				t.Errorf("server %#v,\nwant %#v", s.Server, tt.want)
			}
			var got []string
			for _, m := range s.Metrics() {
				if m.Optional() {
					got = append(got, m.Name)
				}
			}
			if !slices.Equal(got, tt.metrics) {
				t.Errorf("optional metrics %v, want %v", got, tt.metrics)
			}
			if tb := kinds.DescribeServer(s.Server); len(tb.Rows) == 0 || len(tb.Numeric) != len(tb.Header) || tb.Caption == "" {
				t.Errorf("description %+v", tb)
			}
		})
	}
}

func TestWorkloadKindsDecode(t *testing.T) {
	for _, tt := range []struct {
		name, clients string
		want          sim.Workload
		ops           int
	}{
		{"open loop", `    clients: {type: open-loop, rate: 70, until: 60s, max_attempts: 4}
`, &sim.OpenLoop{Rates: sim.ConstantRate(70), Until: time.Minute}, 4200},
		{"open loop in steps", `    clients:
      type: open-loop
      rates:
        - {per_second: 10, ramp: true}
        - {at: 10s, per_second: 30}
      until: 20s
      regular: true
      processes: 4
      output_tokens: 100
      max_attempts: 4
`, &sim.OpenLoop{Rates: []sim.RateStep{{PerSecond: 10, Ramp: true}, {At: 10 * time.Second, PerSecond: 30}}, Until: 20 * time.Second,
			Regular: true, Processes: 4, OutputTokens: 100}, 500},
		{"closed loop", `    clients: {type: closed-loop, workers: 100, per_worker: 100, think: {exponential: 100ms}, until: 10s, max_attempts: 4}
`, &sim.ClosedLoop{Workers: 100, PerWorker: 100, Think: sim.Exponential{Mean: ms(100)}, Until: 10 * time.Second}, 10000},
		{"agent sessions", `    clients:
      type: agent-sessions
      sessions: 50
      turns: 10
      think: 2s
      spread: 10s
      resume: restart
      pause: 1s
      max_repeats: 2
      input_tokens: 2000
      input_growth: 500
      output_tokens: 400
      max_attempts: 4
`, &sim.AgentSessions{Sessions: 50, Turns: 10, Think: sim.Fixed(2 * time.Second), Spread: 10 * time.Second, Resume: sim.ResumeRestart,
			Pause: time.Second, MaxRepeats: 2, InputTokens: 2000, InputGrowth: 500, OutputTokens: 400}, 1500},
		{"agent sessions with background calls", `    clients: {type: agent-sessions, sessions: 5, turns: 10, background: {share: 0.2}, max_attempts: 4}
`, &sim.AgentSessions{Sessions: 5, Turns: 10, Background: sim.Background{Share: 0.2, Priority: sim.PrioritySheddable}}, 50},
		{"agent sessions with critical background calls", `    clients: {type: agent-sessions, sessions: 5, turns: 10, background: {share: 0.5, priority: 7}, max_attempts: 4}
`, &sim.AgentSessions{Sessions: 5, Turns: 10, Background: sim.Background{Share: 0.5, Priority: 7}}, 50},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := parseOne(t, withModels(`    server: {phases: [{admit: 6, window: 1s}]}
`, tt.clients))
			if !reflect.DeepEqual(s.Workload, tt.want) || s.Operations() != tt.ops {
				t.Errorf("workload %#v (%d operations),\nwant %#v (%d)", s.Workload, s.Operations(), tt.want, tt.ops)
			}
			if kinds.DescribeWorkload(s.Workload) == "" {
				t.Error("no description")
			}
			sessionsCompleted, _ := metrics.Lookup("sessions.completed")
			if _, ok := s.Workload.(*sim.AgentSessions); ok != slices.Contains(s.Metrics(), sessionsCompleted) {
				t.Errorf("sessions metrics %v for %T", ok, s.Workload)
			}
		})
	}
}

// A workload's priorities field: shares by name or number, highest first
// whatever the file's order, carried into every run's Config.
func TestPrioritiesDecode(t *testing.T) {
	s := parseOne(t, withModels(`    server: {phases: [{admit: 6, window: 1s}]}
`, `    clients: {count: 10, max_attempts: 3, priorities: {sheddable: 0.5, 7: 0.1, critical: 0.2}}
`))
	want := sim.PriorityShares{{Priority: 7, Share: 0.1}, {Priority: sim.PriorityCritical, Share: 0.2}, {Priority: sim.PrioritySheddable, Share: 0.5}}
	if !reflect.DeepEqual(s.Priorities, want) || !reflect.DeepEqual(s.Config(0, 1).Priorities, want) {
		t.Errorf("priorities %v, config %v, want %v", s.Priorities, s.Config(0, 1).Priorities, want)
	}
}

// Every problem with the new fields is an error at its line and field.
func TestModelErrors(t *testing.T) {
	for _, tt := range []struct{ server, clients, want string }{
		{`    server: {type: nope}
`, burstClients, `m.yaml:3:20: scenarios[0].server.type: unknown server type "nope"; choose one of capacity-windows, queue, error-mix, rate-limit, contention`},
		{"", `    clients: {type: nope, max_attempts: 1}
`, `scenarios[0].clients.type: unknown workload type "nope"; choose one of burst, open-loop, closed-loop, agent-sessions`},
		{"", `    clients: {count: 5, max_attempts: 3, priorities: {urgent: 0.2}}
`, `m.yaml:4:63: scenarios[0].clients.priorities.urgent: "urgent" is not a priority: want critical, default, sheddable or a whole number within ±100`},
		{"", `    clients: {count: 5, max_attempts: 3, priorities: {critical: 0.6, sheddable: 0.5}}
`, "scenarios[0].clients.priorities: priority shares sum to 1.1, more than 1"},
		{"", `    clients: {count: 5, max_attempts: 3, priorities: {critical: 1.5}}
`, "scenarios[0].clients.priorities.critical: must be"},
		{"", `    clients: {count: 5, max_attempts: 3, priorities: {critical: 0.1, 1: 0.2}}
`, "scenarios[0].clients.priorities: priority critical is given twice"},
		{`    server: {type: queue, service: 1s}
`, burstClients, "scenarios[0].server.concurrency: missing: how many workers"},
		{`    server: {type: queue, concurrency: 2, phases: [{concurrency: 1}], service: 1s}
`, burstClients, "scenarios[0].server.phases: set one of concurrency, phases, trace, not both concurrency and phases"},
		{`    server: {type: queue, phases: [{concurrency: 1}, {concurrency: 2}], service: 1s}
`, burstClients, "scenarios[0].server.phases[0].duration: must be > 0"},
		{`    server: {type: queue, concurrency: 2}
`, burstClients, "scenarios[0].server.service: missing"},
		{`    server: {type: rate-limit, requests_per_minute: 6, max_retry_after: 1m, inner: {phases: [{admit: 1, window: 1s}]}}
`, burstClients, "scenarios[0].server.max_retry_after: bounds a growing retry-after: set retry_after_growth too"},
		{`    server: {type: rate-limit, requests_per_minute: 6, retry_after_growth: 2000, inner: {phases: [{admit: 1, window: 1s}]}}
`, burstClients, "scenarios[0].server.retry_after_growth"},
		{`    server: {type: queue, concurrency: 2, service: 1s, reject: unavailable}
`, burstClients, "scenarios[0].server.reject: has no effect"},
		{`    server: {type: queue, concurrency: 2, service: {exponential: 1s, fixed: 1s}}
`, burstClients, "m.yaml:3:52: scenarios[0].server.service: want one distribution"},
		{`    server: {type: queue, concurrency: 2, service: {gamma: 1s}}
`, burstClients, "scenarios[0].server.service.gamma: unknown field (known fields: fixed, exponential, lognormal, normal, uniform, mixture)"},
		{`    server: {type: contention, network: {normal: {mean: 10ms}}}
`, burstClients, "m.yaml:3:50: scenarios[0].server.network.normal.stddev: missing: the standard deviation"},
		{`    server: {type: contention, network: {normal: {stddev: 1ms}}}
`, burstClients, "scenarios[0].server.network.normal.mean: missing: the mean"},
		{`    server: {type: contention, network: {normal: {mean: 10ms, stddev: -1ms}}}
`, burstClients, "m.yaml:3:71: scenarios[0].server.network.normal.stddev: must not be negative"},
		{`    server: {type: contention, network: {normal: {mean: 10ms, stddev: 2ms, sd: 1ms}}}
`, burstClients, "scenarios[0].server.network.normal.sd: unknown field (known fields: mean, stddev)"},
		{`    server: {type: contention, network: {normal: 10ms}}
`, burstClients, "scenarios[0].server.network.normal: want a mapping"},
		// A null distribution has no position of its own: the error is at its key.
		{`    server: {type: contention, network: {normal}}
`, burstClients, "m.yaml:3:41: scenarios[0].server.network.normal: want {mean: DURATION, stddev: DURATION}"},
		{`    server: {type: queue, concurrency: 2, service: {lognormal: }}
`, burstClients, "m.yaml:3:52: scenarios[0].server.service.lognormal: want {median: DURATION, p99: DURATION}"},
		{`    server: {type: contention, service: 10ms}
`, burstClients, "scenarios[0].server.service: unknown field (known fields: type, network)"},
		{`    server: {type: queue, concurrency: 2, service: {uniform: [2s, 1s]}}
`, burstClients, "scenarios[0].server.service.uniform[1]: must be at least the min (2s), got 1s"},
		{`    server: {type: queue, concurrency: 2, service: {uniform: [1s]}}
`, burstClients, "scenarios[0].server.service.uniform: want [min, max], two durations"},
		{`    server: {type: queue, concurrency: 2, service: {lognormal: {median: 2s, p99: 1s}}}
`, burstClients, "scenarios[0].server.service.lognormal.p99: must be at least the median (2s), got 1s"},
		{`    server: {type: queue, concurrency: 2, service: [1s]}
`, burstClients, `scenarios[0].server.service: want a duration or a distribution such as {exponential: 100ms}, got a list`},
		{`    server: {type: error-mix, failures: [{probability: 0.7}, {probability: 0.5}]}
`, burstClients, "scenarios[0].server.failures: the probabilities add up to 1.2, more than 1"},
		{`    server: {type: error-mix, failures: [{probability: 1.5}]}
`, burstClients, "scenarios[0].server.failures[0].probability: must be between 0 and 1, got 1.5"},
		{`    server: {type: error-mix, failures: [], stream_share: 0.5}
`, burstClients, "scenarios[0].server.stream_share: has no effect without stream: true"},
		{`    server: {type: rate-limit, inner: {phases: [{admit: 1, window: 1s}]}}
`, burstClients, "scenarios[0].server.requests_per_minute: missing: set at least one limit"},
		{`    server: {type: rate-limit, requests_per_minute: 10, inner: {type: queue, service: 1s}}
`, burstClients, "scenarios[0].server.inner.concurrency: missing"},
		{`    server: {type: rate-limit, requests_per_minute: 10}
`, burstClients, "scenarios[0].server.inner: missing"},
		{`    server: {phases: [{admit: 1, window: 1s}], window: 1s}
`, burstClients, "scenarios[0].server.window: is a field of each phase (here only with trace)"},
		{"", `    clients: {type: open-loop, rate: 10, max_attempts: 1}
`, "scenarios[0].clients.until: missing"},
		{"", `    clients: {type: open-loop, rate: 10, until: 1s, processes: 0, max_attempts: 1}
`, "scenarios[0].clients.processes: must be between 1 and 1000000"},
		{"", `    clients: {type: open-loop, rates: [{per_second: 1}, {at: 0s, per_second: 2}], until: 1s, max_attempts: 1}
`, "scenarios[0].clients.rates[1].at: must be after the previous rate's (0s), got 0s"},
		{"", `    clients: {type: open-loop, rate: 1000000, until: 200s, max_attempts: 1}
`, "scenarios[0].clients: the workload may start 200000000 operations in a run; at most 100000000 are supported"},
		{"", `    clients: {type: closed-loop, workers: 20000, per_worker: 10000, max_attempts: 1}
`, "scenarios[0].clients: the workload may start 200000000 operations in a run; at most 100000000 are supported"},
		{"", `    clients: {type: closed-loop, workers: 10, max_attempts: 1}
`, "scenarios[0].clients.per_worker: missing"},
		{"", `    clients: {type: agent-sessions, sessions: 10, turns: 5, resume: again, max_repeats: 1, max_attempts: 1}
`, `scenarios[0].clients.resume: want turn (repeat the failed call) or restart (start the session again), got "again"`},
		{"", `    clients: {type: agent-sessions, sessions: 10, turns: 5, pause: 1s, max_attempts: 1}
`, "scenarios[0].clients.pause: has no effect"},
		{"", `    clients: {type: agent-sessions, sessions: 10, turns: 5, background: {priority: critical}, max_attempts: 1}
`, "scenarios[0].clients.background.share: missing: the share of each session's turns that are background calls"},
		{"", `    clients: {type: agent-sessions, sessions: 10, turns: 5, background: {share: 0.1, priority: low}, max_attempts: 1}
`, `scenarios[0].clients.background.priority: "low" is not a priority`},
		{"", `    clients: {type: agent-sessions, sessions: 10, turns: 5, background: {share: 0.1}, priorities: {critical: 0.5}, max_attempts: 1}
`, "scenarios[0].clients.priorities: this workload gives its operations priorities itself (agent sessions' background, each group's)"},
		{"", `    clients: {type: agent-sessions, sessions: 10, turns: 5, background: {share: 1.5}, max_attempts: 1}
`, "scenarios[0].clients.background.share: must be between 0 and 1"},
		{"", `    clients: {type: agent-sessions, sessions: 10, turns: 5, count: 3, max_attempts: 1}
`, "scenarios[0].clients.count: unknown field (known fields: type, sessions, turns"},
		{`    server: {type: queue, trace: workers.csv, service: 1s}
`, burstClients, `scenarios[0].server.trace: cannot read "workers.csv": traces are read next to a scenario file loaded from disk`},
	} {
		server := tt.server
		if server == "" {
			server = "    server: {phases: [{admit: 6, window: 1s}]}\n"
		}
		_, err := Parse("m.yaml", []byte(withModels(server, tt.clients)))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s%s: err = %v,\nwant %q", server, tt.clients, err, tt.want)
			continue
		}
		if n := strings.Count(err.Error(), "\n") + 1; n != 1 {
			t.Errorf("%s: %d errors for one problem:\n%v", tt.want, n, err)
		}
	}
}

// Capacity traces are read next to the scenario file; their errors name
// the CSV file and line.
func TestCapacityTraces(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("workers.csv", "start,concurrency\n0,10\n20s,5\n30,10\n")
	write("admit.csv", "# an incident\n0s,0\n2s,6\n")
	write("bad.csv", "start,concurrency\n0,10\n2s,5\n2s,6\n")
	src := withModels(`    server: {type: queue, trace: workers.csv, service: 100ms}
`, burstClients)
	src = strings.Replace(src, "scenarios:\n", "scenarios:\n  - name: windows\n    server: {trace: admit.csv, window: 500ms, reject: rate-limited}\n"+burstClients+"    policies: [{name: immediate}]\n", 1)
	write("s.yaml", src)
	f, err := Load(filepath.Join(dir, "s.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	windows := f.Scenarios[0].Server.(*sim.CapacityWindows)
	want := []sim.Phase{{Duration: 2 * time.Second, Window: ms(500), Reject: sim.Rejection{Status: 429, Class: policies.RetryAfter, RetryAfter: kinds.DefaultRetryAfter}}, {Admit: 6, Window: ms(500), Reject: sim.Rejection{Status: 429, Class: policies.RetryAfter, RetryAfter: kinds.DefaultRetryAfter}}}
	if !reflect.DeepEqual(windows.Phases, want) {
		t.Errorf("window phases %+v", windows.Phases)
	}
	q := f.Scenarios[1].Server.(*sim.Queue)
	if !reflect.DeepEqual(q.Phases, []sim.WorkerPhase{{Duration: 20 * time.Second, Concurrency: 10}, {Duration: 10 * time.Second, Concurrency: 5}, {Concurrency: 10}}) {
		t.Errorf("worker phases %+v", q.Phases)
	}
	write("s.yaml", strings.Replace(src, "workers.csv", "bad.csv", 1))
	_, err = Load(filepath.Join(dir, "s.yaml"))
	if err == nil || !strings.Contains(err.Error(), "scenarios[1].server.trace: bad.csv:4: start 2s is not after the previous row's 2s") {
		t.Errorf("bad trace: %v", err)
	}
	write("s.yaml", strings.Replace(src, "workers.csv", "missing.csv", 1))
	if _, err = Load(filepath.Join(dir, "s.yaml")); err == nil || !strings.Contains(err.Error(), "scenarios[1].server.trace: open ") {
		t.Errorf("missing trace: %v", err)
	}
	abs := strings.Replace(src, "workers.csv", filepath.Join(dir, "workers.csv"), 1)
	abs = strings.Replace(abs, "admit.csv", filepath.Join(dir, "admit.csv"), 1)
	if _, err := ParseIn("<stdin>", []byte(abs), ""); err != nil {
		t.Errorf("absolute path from stdin: %v", err)
	}
	// ParseWith reads the traces through its reader, joined to dir.
	var read []string
	_, err = ParseWith("s.yaml", []byte(src), "elsewhere", func(path string) ([]byte, error) {
		read = append(read, path)
		return os.ReadFile(filepath.Join(dir, filepath.Base(path)))
	})
	if want := []string{filepath.Join("elsewhere", "admit.csv"), filepath.Join("elsewhere", "workers.csv")}; err != nil || !slices.Equal(read, want) {
		t.Errorf("ParseWith read %q (%v), want %q", read, err, want)
	}
}

// Sweep parameters reach the kinds that have them, through a rate limit
// to its inner server, on a clone.
func TestModelParams(t *testing.T) {
	s := parseOne(t, withModels(`    server:
      type: rate-limit
      requests_per_minute: 600
      inner: {type: queue, phases: [{duration: 1s, concurrency: 1}, {concurrency: 4}], service: 100ms}
`, `    clients: {type: agent-sessions, sessions: 5, turns: 3, max_attempts: 3}
`))
	c := s.Clone()
	set := func(name string, v int64) error {
		p, _ := kinds.LookupParam(name)
		return c.Set(p, v)
	}
	for name, v := range map[string]int64{"concurrency": 7, "service_time": int64(time.Second), "requests_per_minute": 60, "clients": 9} {
		if err := set(name, v); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	rl := c.Server.(*sim.RateLimit)
	q := rl.Inner.(*sim.Queue)
	if rl.RequestsPerMinute != 60 || q.Phases[1].Concurrency != 7 || q.Service != sim.Fixed(time.Second) || c.Workload.(*sim.AgentSessions).Sessions != 9 {
		t.Errorf("clone after setting: %+v, %+v, %+v", rl, q, c.Workload)
	}
	orig := s.Server.(*sim.RateLimit)
	if orig.RequestsPerMinute != 600 || orig.Inner.(*sim.Queue).Phases[1].Concurrency != 4 || s.Workload.(*sim.AgentSessions).Sessions != 5 {
		t.Error("setting a clone changed the original")
	}
	if err := set("capacity", 3); err == nil || !strings.Contains(err.Error(), "no capacity") {
		t.Errorf("capacity on a queue: %v", err)
	}
	if err := set("rate", 3); err == nil || !strings.Contains(err.Error(), "not an open loop") {
		t.Errorf("rate on sessions: %v", err)
	}
	if err := set("network", int64(ms(5))); err == nil || !strings.Contains(err.Error(), "not a contention server") {
		t.Errorf("network on a rate limit: %v", err)
	}
}

// network sets a contention server's mean delay; a normal delay keeps its
// spread relative to the mean.
func TestNetworkParam(t *testing.T) {
	p, _ := kinds.LookupParam("network")
	for _, tt := range []struct {
		before, after sim.Distribution
	}{
		{sim.FoldedNormal{Mean: ms(10), StdDev: ms(2)}, sim.FoldedNormal{Mean: ms(20), StdDev: ms(4)}},
		{sim.Uniform{Min: ms(1), Max: ms(3)}, sim.Fixed(ms(20))},
	} {
		s := &Scenario{Server: &sim.Contention{Network: tt.before}, Workload: sim.Burst{Clients: 2}}
		c := s.Clone()
		if err := c.Set(p, int64(ms(20))); err != nil {
			t.Fatal(err)
		}
		if got := c.Server.(*sim.Contention).Network; got != tt.after || s.Server.(*sim.Contention).Network != tt.before {
			t.Errorf("network 20ms on %v: %v (original now %v)", tt.before, got, s.Server.(*sim.Contention).Network)
		}
	}
}

// The estimate bounds attempts with the server's shortest response.
func TestModelMinResponse(t *testing.T) {
	for _, tt := range []struct {
		server sim.ServerModel
		want   time.Duration
	}{
		{&sim.CapacityWindows{ResponseTime: sim.Uniform{Min: ms(50), Max: ms(70)}}, ms(50)},
		{&sim.Queue{Service: sim.Fixed(ms(100))}, ms(100)},
		{&sim.Queue{Service: sim.Fixed(ms(100)), QueueLimit: 3, RejectAfter: ms(10)}, ms(10)},
		{&sim.Queue{Service: sim.Fixed(ms(100)), DropAbandoned: true}, 0},
		{&sim.ErrorMix{Latency: sim.Fixed(ms(200)), FailLatency: sim.Fixed(ms(20))}, ms(20)},
		{&sim.ErrorMix{Latency: sim.Fixed(ms(200)), Stream: true, StreamShare: 0.5}, ms(100)},
		{&sim.ErrorMix{Latency: sim.Exponential{Mean: ms(200)}}, 0},
		{&sim.RateLimit{RejectAfter: ms(5), Inner: &sim.Queue{Service: sim.Fixed(ms(100))}}, ms(5)},
	} {
		if got := kinds.MinResponse(tt.server); got != tt.want {
			t.Errorf("minResponse(%#v) = %v, want %v", tt.server, got, tt.want)
		}
	}
}

// An expectation on an optional metric that no part of the scenario
// reports is an error at the expectation.
func TestExpectationsOnUncountedMetrics(t *testing.T) {
	src := strings.Replace(valid, "      - name: immediate\n", "      - name: immediate\n        expect: [\"fallbacks == 0\", \"server.wasted <= 3\"]\n", 1)
	_, err := Parse("e.yaml", []byte(src))
	want := []string{
		"e.yaml:15:18: scenarios[0].policies[0].expect[0]: fallbacks is not reported for this scenario: its server, workload and policies do not count it",
		"e.yaml:15:36: scenarios[0].policies[0].expect[1]: server.wasted is not reported for this scenario: its server, workload and policies do not count it",
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("err = %v, want\n%s", err, strings.Join(want, "\n"))
	}
	ok := strings.Replace(withModels("    server: {type: queue, concurrency: 2, service: 1s}\n", burstClients),
		"      - name: immediate\n", "      - name: immediate\n        expect: [\"server.wasted <= 3\"]\n", 1)
	parseOne(t, ok)
}
