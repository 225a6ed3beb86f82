package scenarios

import (
	"strings"
	"testing"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
)

// stack is app × SDK × sidecar (3 attempts each) against an upstream that
// always answers reject, the sidecar with the rule given.
func stack(reject, sidecar string) string {
	return `scenarios:
  - name: s
    server: {response_time: 50ms, phases: [{reject: ` + reject + `}]}
    clients: {count: 4}
    policies:
      - name: app
        type: immediate
        delay: 1s
        max_attempts: 3
        layers:
          - {name: sdk, type: anthropic-sdk}
          - {name: sidecar, type: immediate, delay: 25ms, max_attempts: 3` + sidecar + `}
`
}

// The requests per operation of the 3 × 3 × 3 stack: the sidecar's
// retry_on decides whether it retries what the upstream answers. With
// Istio's [503] it passes a 529 back at once (3 × 3 × 1 = 9) and retries
// a 503 (27); a class name matches every status of the class.
func TestRetryOnInTheLayeredStack(t *testing.T) {
	for _, tt := range []struct {
		reject, sidecar string
		perOp           int
	}{
		{"overloaded", ", retry_on: [503]", 9},
		{"unavailable", ", retry_on: [503]", 27},
		{"overloaded", ", retry_on: [capacity]", 27},
		{"overloaded", ", retry_on: [429, 500, transient]", 9},
		{"overloaded", "", 27},
	} {
		s := parseOne(t, stack(tt.reject, tt.sidecar))
		r, err := sim.Run(s.Config(0, 1))
		if err != nil {
			t.Fatal(err)
		}
		if ops := s.Operations(); r.Attempts != tt.perOp*ops || r.GaveUp != ops {
			t.Errorf("%s against %s: %d attempts for %d operations (%d gave up), want %d each", tt.sidecar, tt.reject, r.Attempts, ops, r.GaveUp, tt.perOp)
		}
	}
}

// retry_on decodes on a policy and on a layer, and the layer's
// description says it.
func TestRetryOnDecodes(t *testing.T) {
	s := parseOne(t, stack("overloaded", ", retry_on: [529, 503, retry-after]"))
	on := s.Policies[0].Layers[1].Rules.RetryOn
	if !on.Statuses.Has(503) || !on.Statuses.Has(529) || on.Statuses.Has(500) || !on.Classes.Has(policies.RetryAfter) || on.Classes.Has(policies.Capacity) {
		t.Errorf("retry_on decoded as %v", on)
	}
	if !s.Policies[0].Rules.RetryOn.IsZero() || !s.Policies[0].Layers[0].Rules.RetryOn.IsZero() {
		t.Error("retry_on reached a level that does not set it")
	}
	if d := kinds.DescribeCoordination(&s.Policies[0]); !strings.Contains(d, "sidecar (3 attempts, fixed 25ms, retries only 503,529,retry-after, none)") {
		t.Errorf("describe: %s", d)
	}
	src := strings.Replace(valid, "      - name: immediate\n", "      - name: immediate\n        retry_on: [transient, 429]\n", 1)
	f, err := Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if on := f.Scenarios[0].Policies[0].Rules.RetryOn; on.String() != "429,transient" {
		t.Errorf("policy retry_on = %q, want 429,transient", on)
	}
}

// A bad entry is an error naming the file, line, column and field.
func TestRetryOnErrors(t *testing.T) {
	for _, tt := range []struct{ sidecar, want string }{
		{", retry_on: [503, capacty]", `m.yaml:12:92: scenarios[0].policies[0].layers[1].retry_on[1]: unknown class "capacty" (did you mean "capacity"?); want a status from 400 to 599, or a class: retry-after, capacity, transient`},
		{", retry_on: [302]", `m.yaml:12:87: scenarios[0].policies[0].layers[1].retry_on[0]: want a status from 400 to 599, or a class: retry-after, capacity, transient, got 302`},
		{", retry_on: [terminal]", `m.yaml:12:87: scenarios[0].policies[0].layers[1].retry_on[0]: a terminal failure is never retried by its class; list its status (such as 400) to retry it`},
		{", retry_on: [503, 503]", `m.yaml:12:92: scenarios[0].policies[0].layers[1].retry_on[1]: 503 is listed twice`},
		{", retry_on: []", `m.yaml:12:86: scenarios[0].policies[0].layers[1].retry_on: the list is empty`},
		{", retry_on: 503", `m.yaml:12:86: scenarios[0].policies[0].layers[1].retry_on: want a list, got number "503"`},
		{", retry_on: [{status: 503}]", `m.yaml:12:87: scenarios[0].policies[0].layers[1].retry_on[0]: want a status from 400 to 599, or a class: retry-after, capacity, transient, got a mapping`},
		{", retry_on: [5.03e2]", `retry_on[0]: want a status from 400 to 599, or a class: retry-after, capacity, transient, got`},
		{", retry_on: [503], retry_by: status", `layers[1].retry_by: retry_on replaces the rule retry_by chooses: give one of them`},
		{", retry_on: [503], retry_capacity: false", `layers[1].retry_on: lists capacity failures (capacity, 503, 529), which this policy never retries (retry_capacity: false)`},
	} {
		_, err := Parse("m.yaml", []byte(stack("overloaded", tt.sidecar)))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v,\nwant %q", tt.sidecar, err, tt.want)
		}
	}
	// A preset that never retries capacity failures refuses them in its list.
	src := strings.Replace(valid, "      - name: immediate\n", "      - name: background\n        type: claude-code-background\n        retry_on: [529]\n", 1)
	want := `x.yaml:16:19: scenarios[0].policies[0].retry_on: lists capacity failures (capacity, 503, 529), which this policy never retries (type claude-code-background sets retry_capacity: false)`
	if _, err := Parse("x.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("claude-code-background with retry_on: [529]: err = %v,\nwant %q", err, want)
	}
}
