package scenarios

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
	"go.yaml.in/yaml/v3"
)

// valid is a minimal correct file; the bad-input tests each break one thing.
const valid = `scenarios:
  - name: s
    server:
      phases:
        - duration: 2s
          reject: overloaded
        - admit: 6
          window: 1s
    clients:
      count: 20
      max_attempts: 8
      deadline: 20s
    policies:
      - name: immediate
      - name: gated
        throttle:
          rate: 6
`

func TestParseValidFileFillsDefaults(t *testing.T) {
	f, err := Parse("x.yaml", []byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenarios[0]
	if f.Default != "s" || s.Seed != DefaultSeed || s.Operations() != 20 {
		t.Fatalf("default %q seed %d clients %d", f.Default, s.Seed, s.Operations())
	}
	server := s.Server.(*sim.CapacityWindows)
	if server.ResponseTime.Sample(nil) != kinds.DefaultResponseTime {
		t.Fatalf("response time %v, want the default", server.ResponseTime.Sample(nil))
	}
	if got := server.Phases[1].Reject; got.Status != 529 || got.Class != policies.Capacity {
		t.Fatalf("default rejection %+v, want 529 capacity", got)
	}
	imm := s.Policies[0]
	if imm.Rules.Backoff != (policies.Constant{Wait: kinds.DefaultImmediate}) || imm.Rules.MaxAttempts != 8 || imm.Rules.Deadline != 20*time.Second {
		t.Fatalf("immediate = %+v", imm.Rules)
	}
	g := s.Policies[1]
	wantBackoff := policies.FullJitter{Base: kinds.DefaultBase, Factor: kinds.DefaultFactor, Cap: kinds.DefaultCap}
	if !reflect.DeepEqual(g.Coordinators, []machine.Spec{machine.GateConfig{}, machine.ThrottleConfig{Count: 6, Per: time.Second}}) || g.Rules.Backoff != wantBackoff {
		t.Fatalf("gated = %+v", g)
	}
}

func TestPolicyOverridesClientLimits(t *testing.T) {
	src := strings.Replace(valid, "      - name: immediate\n", "      - name: immediate\n        max_attempts: 3\n        deadline: 5s\n", 1)
	f, err := Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if d := f.Scenarios[0].Policies[0].Rules; d.MaxAttempts != 3 || d.Deadline != 5*time.Second {
		t.Fatalf("override ignored: %+v", d)
	}
}

// Each bad input gets an error naming the file, the line and the field.
func TestBadInputErrors(t *testing.T) {
	tests := []struct {
		name    string
		old     string // text of valid to replace
		new     string
		want    string // substring of the error, "file:line:col: field: ..."
		wantAll []string
	}{
		{"unknown field", "      count: 20\n", "      count: 20\n      colour: red\n", "x.yaml:11:7: scenarios[0].clients.colour: unknown field", nil},
		{"wrong type", "count: 20", "count: lots", `x.yaml:10:14: scenarios[0].clients.count: want a whole number, got string "lots"`, nil},
		{"negative duration", "deadline: 20s", "deadline: -3s", "x.yaml:12:17: scenarios[0].clients.deadline: must not be negative, got -3s", nil},
		{"duration without unit", "deadline: 20s", "deadline: 20", `x.yaml:12:17: scenarios[0].clients.deadline: want a duration with a unit such as "2s" or "100ms", got number "20"`, nil},
		{"zero clients", "count: 20", "count: 0", "x.yaml:10:14: scenarios[0].clients.count: must be between 1 and", nil},
		{"too many clients", "count: 20", "count: 900000000", "scenarios[0].clients.count: must be between 1 and 100000000", nil},
		{"zero-length window", "window: 1s", "window: 0s", "x.yaml:8:19: scenarios[0].server.phases[1].window: must be > 0 when the phase admits requests", nil},
		{"admitting phase without window", "          window: 1s\n", "", "x.yaml:7:11: scenarios[0].server.phases[1].window: must be > 0", nil},
		{"endless phase before the last", "        - duration: 2s\n", "        - duration: 0s\n", "scenarios[0].server.phases[0].duration: must be > 0: only the last phase may run on forever", nil},
		{"unknown rejection", "reject: overloaded", "reject: sad", `x.yaml:6:19: scenarios[0].server.phases[0].reject: unknown outcome "sad"`, nil},
		{"unknown policy type", "- name: immediate", "- name: bogus", `scenarios[0].policies[0].type: missing: "bogus" is not a policy type`, nil},
		{"bad explicit type", "- name: immediate", "- name: mine\n        type: quadratic", `x.yaml:15:15: scenarios[0].policies[0].type: unknown policy type "quadratic"`, nil},
		{"cap below base", "- name: immediate", "- name: capped-exponential\n        base: 2s\n        cap: 1s", "x.yaml:16:14: scenarios[0].policies[0].cap: must be at least base (2s), got 1s", nil},
		{"factor below 1", "- name: immediate", "- name: full-jitter\n        factor: 0.5", "scenarios[0].policies[0].factor: must be between 1 and 1000, got 0.5", nil},
		{"param of another type", "- name: immediate", "- name: immediate\n        base: 1s", "scenarios[0].policies[0].base: the immediate policy has only a delay", nil},
		{"backoff of a policy typed by its backoff", "- name: immediate", "- name: immediate\n        backoff: full-jitter", "scenarios[0].policies[0].backoff: only a policy of a preset type (gated, anthropic-sdk-go, anthropic-sdk-python, anthropic-sdk-typescript, openai-python, openai-go, openai-node, aws-standard, aws-adaptive, grpc-throttled, sre, claude-code, claude-code-background, langchain-js, vercel-ai-sdk, anthropic-sdk, openai-sdk, agent-cli, agent-cli-background) chooses its backoff", nil},
		{"max_queue without max_in_flight", "- name: immediate", "- name: immediate\n        max_queue: 3", "scenarios[0].policies[0].max_queue: bounds the queue of max_in_flight, which is not set", nil},
		{"fallback with an unknown field", "- name: immediate", "- name: immediate\n        fallback: {after: 2, later: true}", "scenarios[0].policies[0].fallback.later: unknown field (known fields: after, sticky, restart)", nil},
		{"throttle without rate", "rate: 6", "per: 2s", "scenarios[0].policies[1].throttle.rate: missing", nil},
		{"zero throttle rate", "rate: 6", "rate: 0", "x.yaml:17:17: scenarios[0].policies[1].throttle.rate: must be between 1 and", nil},
		{"no limits", "      max_attempts: 8\n      deadline: 20s\n", "", "scenarios[0].policies[0].max_attempts: set max_attempts or deadline", nil},
		{"duplicate policy", "      - name: gated\n", "      - name: immediate\n", `scenarios[0].policies[1].name: policy "immediate" appears twice`, nil},
		{"duplicate field", "      count: 20\n", "      count: 20\n      count: 30\n", "x.yaml:11:7: scenarios[0].clients.count: field given twice", nil},
		{"list instead of mapping", "    clients:\n      count: 20\n      max_attempts: 8\n      deadline: 20s\n", "    clients: [20]\n", "x.yaml:9:14: scenarios[0].clients: want a mapping of fields, got a list", nil},
		{"missing server", "    server:\n", "    serverz:\n", "scenarios[0].server: missing", nil},
		{"incident without end", "    server:\n", "    incident: {start: 2s}\n    server:\n", "x.yaml:3:15: scenarios[0].incident.end: missing", nil},
		{"incident ending at its start", "    server:\n", "    incident: {start: 2s, end: 2s}\n    server:\n", "scenarios[0].incident.end: must be after start (2s), got 2s", nil},
		{"incident with an unknown field", "    server:\n", "    incident: {end: 2s, until: 3s}\n    server:\n", "scenarios[0].incident.until: unknown field", nil},
		{"several problems reported together", "count: 20", "count: -1\n      spread: soon", "",
			[]string{"scenarios[0].clients.count: must be between", `scenarios[0].clients.spread: want a duration such as "2s" or "100ms", got "soon"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(valid, tt.old, tt.new, 1)
			if src == valid {
				t.Fatalf("test broke nothing: %q not in the valid file", tt.old)
			}
			_, err := Parse("x.yaml", []byte(src))
			if err == nil {
				t.Fatalf("accepted:\n%s", src)
			}
			for _, want := range append(tt.wantAll, tt.want) {
				if want != "" && !strings.Contains(err.Error(), want) {
					t.Fatalf("error\n  %v\ndoes not contain\n  %s", err, want)
				}
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.File != "x.yaml" || fe.Line == 0 {
				t.Fatalf("error %v does not carry file and line (%+v)", err, fe)
			}
		})
	}
}

func TestFileLevelErrors(t *testing.T) {
	for _, tt := range []struct{ name, src, want string }{
		{"empty", "", "x.yaml: file is empty"},
		{"syntax", "scenarios:\n  - name: [\n", "x.yaml:3:1: invalid YAML: did not find expected node content at the end of the file"},
		{"no scenarios", "default: s\n", "x.yaml:1:1: scenarios: missing"},
		{"scalar document", "hello\n", "x.yaml:1:1: want a mapping of fields"},
		{"two documents", valid + "---\nscenarios: []\n", "x.yaml:18:1: only one YAML document"},
		{"unknown default", "default: nope\n" + valid, `x.yaml:1:10: default: no scenario is called "nope"`},
		{"tab indentation", "scenarios:\n\t- name: s\n", "invalid YAML"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "none.yaml"))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "none.yaml") {
		t.Fatalf("err = %v, want a not-exist error naming the file", err)
	}
}

// The shipped file must load, and its reference scenario must be domain.md's.
func TestBuiltinReferenceScenario(t *testing.T) {
	f, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.Lookup("overload-burst")
	if err != nil || f.Default != "overload-burst" {
		t.Fatalf("lookup: %v (default %q)", err, f.Default)
	}
	server := s.Server.(*sim.CapacityWindows)
	if s.Workload != (sim.Burst{Clients: 20}) || server.ResponseTime.Sample(nil) != 100*time.Millisecond {
		t.Fatalf("workload %+v", s.Workload)
	}
	ph := server.Phases
	if len(ph) != 2 || ph[0].Duration != 2*time.Second || ph[0].Admit != 0 || ph[0].Reject.Status != 529 ||
		ph[1].Admit != 6 || ph[1].Window != time.Second || ph[1].Reject.Status != 529 {
		t.Fatalf("phases %+v", ph)
	}
	var names []string
	for _, p := range s.Policies {
		names = append(names, p.Name)
		if p.Rules.MaxAttempts != 8 || p.Rules.Deadline != 20*time.Second {
			t.Errorf("%s: limits %+v", p.Name, p.Rules)
		}
	}
	if strings.Join(names, ",") != "immediate,capped-exponential,full-jitter,gated" {
		t.Fatalf("policies %v", names)
	}
	if g, _ := specOf[machine.ThrottleConfig](&s.Policies[3]); g.Count != 6 || g.Per != time.Second {
		t.Fatalf("gated throttle %+v", g)
	}
	if _, err := f.Lookup("nope"); err == nil || !strings.Contains(err.Error(), "overload-burst") {
		t.Fatalf("lookup of a missing scenario: %v", err)
	}
}

// fileLevel matches the errors about a whole file, which have no line: an
// empty file, one over MaxFileSize, and the count of problems not listed.
var (
	fileLevel = regexp.MustCompile(`^fuzz\.yaml: (file is empty|file is larger than|and \d+ more problems?$)`)
	withLine  = regexp.MustCompile(`^fuzz\.yaml:[1-9][0-9]*:`)
)

// The loader must never panic, and every problem it reports must name the
// file and the line: "fuzz.yaml:LINE:...".
//
// The seeds are small: the fuzzer minimises each input that finds new
// coverage by trying to remove every range of its bytes, and on the 30 KB
// scenarios.yaml that took the whole minute of fuzzing (83 executions).
// So the built-in scenarios come one policy at a time, in flow style,
// without descriptions, comments or expectations (FuzzParseExpectations
// fuzzes those; one seed below has some): every kind and field they use
// is still in a seed.
func FuzzParse(f *testing.F) {
	f.Add([]byte(valid))
	b, err := os.ReadFile("../scenarios.yaml")
	if err != nil {
		f.Fatal(err)
	}
	seeds, err := onePolicyEach(b)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range seeds {
		f.Add(seed)
	}
	f.Add([]byte(strings.Replace(valid, "  - name: s\n", "  - name: s\n    check_seeds: 5\n", 1) +
		`        expect: ["completed >= 17", "mean(amplification) <= 5.2", "p95(latency_ms.p99) <= 13000"]` + "\n"))
	f.Add([]byte("scenarios: [{name: a, server: {phases: [{admit: 1, window: 1s}]}, clients: {count: 1, deadline: 1s}, policies: [{name: gated}]}]"))
	// Anchors, aliases and merge keys, which are refused.
	f.Add([]byte("a: &x [*x]"))
	f.Add([]byte(aliasBomb(3)))
	f.Add([]byte(strings.Replace(valid, "      count: 20\n", "      <<: {count: 20}\n", 1)))
	f.Add([]byte("scenarios: *nope\n"))
	// Syntax errors: each kind of position the loader reports.
	f.Add([]byte(strings.Replace(valid, "      count: 20\n", "\tcount: 20\n", 1)))
	f.Add([]byte(strings.Replace(valid, "  - name: s\n", "  - name: s\n    description: a b\n\tc\n", 1)))
	f.Add([]byte(strings.Replace(valid, "      - name: immediate\n", "      - name: 'immediate\n", 1)))
	f.Add([]byte(strings.Replace(valid, "      count: 20\n", "       count: 20\n", 1)))
	f.Add([]byte(strings.Replace(valid, "      count: 20\n", "      count: \xff\n", 1)))
	f.Add([]byte("scenarios: ["))
	f.Add([]byte("scenarios: foo: bar\n"))
	f.Add([]byte(valid + "---\nx: 'y\n"))
	f.Add([]byte("%YAML 1.1\n%YAML 1.1\n---\n"))
	// Numbers at and past the edges.
	f.Add([]byte(strings.Replace(valid, "count: 20", "count: 99999999999999999999", 1)))
	f.Add([]byte(strings.Replace(valid, "admit: 6", "admit: 6.5", 1)))
	// Server models and workloads other than the defaults, distributions.
	f.Add([]byte(withModels("    server: {type: queue, phases: [{duration: 20s, concurrency: 10}, {concurrency: 5}], service: {exponential: 100ms}, queue_limit: 5, drop_abandoned: true}\n",
		"    clients: {type: open-loop, rates: [{per_second: 10, ramp: true}, {at: 10s, per_second: 30}], until: 20s, max_attempts: 4}\n")))
	f.Add([]byte(withModels("    server: {type: error-mix, response_time: {lognormal: {median: 1s, p99: 10s}}, fail_response_time: {uniform: [50ms, 150ms]}, stream: true, stream_share: 0.5, phases: [{duration: 10s}, {failures: [{probability: 0.2, reject: rate-limited, retry_after: 2s}]}]}\n",
		"    clients: {type: closed-loop, workers: 100, per_worker: 100, think: {fixed: 100ms}, until: 10s, max_attempts: 4}\n")))
	f.Add([]byte(withModels("    server: {type: rate-limit, requests_per_minute: 60, input_tokens_per_minute: 1000, input_tokens: 100, inner: {type: error-mix, failures: [{probability: 0.1}]}}\n",
		"    clients: {type: agent-sessions, sessions: 5, turns: 3, think: 2s, resume: restart, pause: 1s, max_repeats: 2, input_growth: 100, max_attempts: 4}\n")))
	f.Add([]byte(withModels("    server: {type: queue, trace: workers.csv, service: 1s}\n", burstClients)))
	f.Add([]byte(withModels("    server: {type: contention, network: {normal: {mean: 10ms, stddev: 2ms}}}\n", burstClients)))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.yaml", data)
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, "fuzz.yaml:") {
					t.Fatalf("error does not name the file: %q in\n%v", line, err)
				}
				if !fileLevel.MatchString(line) && !withLine.MatchString(line) {
					t.Fatalf("error does not name the line: %q in\n%v", line, err)
				}
			}
			return
		}
		for _, s := range file.Scenarios {
			for i := range s.Policies {
				c := s.Config(i, 1)
				if err := c.Validate(); err != nil {
					t.Fatalf("loader accepted a scenario the simulator rejects: %v", err)
				}
			}
		}
	})
}

// onePolicyEach splits a scenario file into files of one scenario with
// one of its policies each, in flow style, without descriptions,
// comments, expectations or check_seeds (which needs expectations).
func onePolicyEach(data []byte) ([][]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	var out [][]byte
	for _, sc := range mappingValue(doc.Content[0], "scenarios").Content {
		flowStyle(sc)
		dropKeys(sc, "description", "check_seeds")
		policies := mappingValue(sc, "policies")
		all := policies.Content
		for _, p := range all {
			dropKeys(p, "expect")
			policies.Content = []*yaml.Node{p}
			b, err := yaml.Marshal(&yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle, Content: []*yaml.Node{
				{Kind: yaml.ScalarNode, Value: "scenarios"},
				{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: []*yaml.Node{sc}},
			}})
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
		policies.Content = all
	}
	return out, nil
}

// mappingValue returns the value of key in mapping m, or an empty node.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return &yaml.Node{}
}

// dropKeys removes keys and their values from mapping m.
func dropKeys(m *yaml.Node, keys ...string) {
	for i := 0; i+1 < len(m.Content); {
		if slices.Contains(keys, m.Content[i].Value) {
			m.Content = slices.Delete(m.Content, i, i+2)
			continue
		}
		i += 2
	}
}

// flowStyle writes n and everything under it in flow style, without
// comments.
func flowStyle(n *yaml.Node) {
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style = yaml.FlowStyle
	}
	for _, c := range n.Content {
		flowStyle(c)
	}
}

// Every built-in scenario, split into FuzzParse's seeds, still loads.
func TestOnePolicyEachLoads(t *testing.T) {
	b, err := os.ReadFile("../scenarios.yaml")
	if err != nil {
		t.Fatal(err)
	}
	seeds, err := onePolicyEach(b)
	if err != nil {
		t.Fatal(err)
	}
	builtin, err := Parse("scenarios.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range builtin.Scenarios {
		n += len(s.Policies)
	}
	if len(seeds) != n {
		t.Fatalf("%d seeds for %d policies", len(seeds), n)
	}
	for _, seed := range seeds {
		if _, err := Parse("seed.yaml", seed); err != nil {
			t.Errorf("%v\n%s", err, seed)
		}
		if len(seed) > 1000 {
			t.Errorf("a seed of %d bytes:\n%s", len(seed), seed)
		}
	}
}

func TestOneErrorPerProblem(t *testing.T) {
	for _, tt := range []struct{ old, new, want string }{
		{"window: 1s", "window: -1s", "scenarios[0].server.phases[1].window: must not be negative"},
		{"count: 20", "count: 0x14", "scenarios[0].clients.count: want a whole number"},
		{"count: 20", "count: 2_0", "scenarios[0].clients.count: want a whole number"},
		// Not also "window: has no effect: this phase admits nothing".
		{"admit: 6", "admit: 6.5", `x.yaml:7:18: scenarios[0].server.phases[1].admit: want a whole number, got number "6.5"`},
	} {
		_, err := Parse("x.yaml", []byte(strings.Replace(valid, tt.old, tt.new, 1)))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Fatalf("%s: err = %v, want %q", tt.new, err, tt.want)
		}
		if n := strings.Count(err.Error(), "\n") + 1; n != 1 {
			t.Errorf("%s: %d errors for one problem:\n%v", tt.new, n, err)
		}
	}
}

// An explicit 0 in retry_bucket or retry_breaker is refused at its line,
// not read as the default (policies' configs take 0 for the default); the
// same field given a positive value is honoured.
func TestRetryBucketAndBreakerRefuseZero(t *testing.T) {
	for _, tt := range []struct{ control, field string }{
		{"retry_bucket", "capacity"},
		{"retry_bucket", "deposit"},
		{"retry_bucket", "threshold"},
		{"retry_bucket", "cost"},
		{"retry_breaker", "max_failure_ratio"},
	} {
		src := func(v string) string {
			return strings.Replace(valid, "      - name: immediate\n",
				"      - name: immediate\n        "+tt.control+": {"+tt.field+": "+v+"}\n", 1)
		}
		// The line the field is on: the one after "- name: immediate".
		line := strings.Count(valid[:strings.Index(valid, "      - name: immediate\n")], "\n") + 2
		_, err := Parse("x.yaml", []byte(src("0")))
		want := fmt.Sprintf("x.yaml:%d:", line)
		field := "scenarios[0].policies[0]." + tt.control + "." + tt.field + ": must be > 0: "
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), field) {
			t.Errorf("%s.%s: 0: err = %v, want %q...%q", tt.control, tt.field, err, want, field)
		} else if n := strings.Count(err.Error(), "\n") + 1; n != 1 {
			t.Errorf("%s.%s: 0: %d errors:\n%v", tt.control, tt.field, n, err)
		}
		for _, bad := range []string{"0.0", "-0"} {
			if _, err := Parse("x.yaml", []byte(src(bad))); err == nil {
				t.Errorf("%s.%s: %s accepted", tt.control, tt.field, bad)
			}
		}
		f, err := Parse("x.yaml", []byte(src("0.25")))
		if err != nil {
			t.Fatalf("%s.%s: 0.25: %v", tt.control, tt.field, err)
		}
		var got float64
		switch p := &f.Scenarios[0].Policies[0]; tt.field {
		case "capacity", "deposit", "threshold", "cost":
			c, ok := specOf[policies.RetryBucketConfig](p)
			if !ok {
				t.Fatalf("no retry bucket in %+v", p)
			}
			got = map[string]float64{"capacity": c.Capacity, "deposit": c.Deposit, "threshold": c.Threshold, "cost": c.Cost}[tt.field]
		default:
			c, ok := specOf[policies.RetryBreakerConfig](p)
			if !ok {
				t.Fatalf("no retry breaker in %+v", p)
			}
			got = c.MaxFailureRatio
		}
		if got != 0.25 {
			t.Errorf("%s.%s: 0.25 read as %v", tt.control, tt.field, got)
		}
	}
}
