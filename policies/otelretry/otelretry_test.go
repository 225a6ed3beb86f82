package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/internal/scripted"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/policies/otelretry"
)

func seeded() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

// harness is a Telemetry over the SDK's in-memory exporters.
type harness struct {
	tel    *otelretry.Telemetry
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	h.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(h.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	var err error
	if h.tel, err = otelretry.New(h.tp, mp); err != nil {
		t.Fatal(err)
	}
	return h
}

// run runs the scripted API through the harness's Do.
func (h *harness) run(t *testing.T, api *scripted.API, opts ...policies.Option) error {
	return h.tel.Do(t.Context(), api.Op, append([]policies.Option{policies.WithRand(seeded())}, opts...)...)
}

// metrics flattens the collected metrics: "name{k=v}" → a counter's sum,
// or a histogram's "count sum".
func (h *harness) metrics(t *testing.T) map[string]string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otelretry.ScopeName {
			t.Errorf("scope %q", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				if !d.IsMonotonic {
					t.Errorf("%s is not monotonic", m.Name)
				}
				for _, p := range d.DataPoints {
					out[m.Name+attrs(p.Attributes)] = fmt.Sprint(p.Value)
				}
			case metricdata.Histogram[float64]:
				if m.Unit != "s" {
					t.Errorf("%s: unit %q", m.Name, m.Unit)
				}
				for _, p := range d.DataPoints {
					out[m.Name+attrs(p.Attributes)] = fmt.Sprintf("%d %.6g", p.Count, p.Sum)
				}
			default:
				t.Errorf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	return out
}

func attrs(s attribute.Set) string {
	var kv []string
	for _, a := range s.ToSlice() {
		kv = append(kv, string(a.Key)+"="+a.Value.Emit())
	}
	return "{" + strings.Join(kv, ",") + "}"
}

// spanAttrs reads a span's attributes as strings.
func spanAttrs(s sdktrace.ReadOnlySpan) map[string]string {
	m := map[string]string{}
	for _, a := range s.Attributes() {
		m[string(a.Key)] = a.Value.Emit()
	}
	return m
}

// tree returns the operation spans and each one's attempt spans, in start
// order.
func tree(t *testing.T, spans []sdktrace.ReadOnlySpan) (ops []sdktrace.ReadOnlySpan, attempts map[string][]sdktrace.ReadOnlySpan) {
	t.Helper()
	attempts = map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		switch s.Name() {
		case otelretry.OperationSpan:
			ops = append(ops, s)
		case otelretry.AttemptSpan:
			p := s.Parent().SpanID().String()
			attempts[p] = append(attempts[p], s)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].StartTime().Before(ops[j].StartTime()) })
	for _, as := range attempts {
		sort.Slice(as, func(i, j int) bool { return as[i].StartTime().Before(as[j].StartTime()) })
	}
	return ops, attempts
}

// TestCapacityThenOK: 529, 529, 200 makes an operation span with three
// attempt children, their classes, statuses and backoffs.
func TestCapacityThenOK(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		if err := h.run(t, scripted.New(scripted.Reply{Status: 529}, scripted.Reply{Status: 529}, scripted.Reply{Status: 200}), policies.WithMaxAttempts(5)); err != nil {
			t.Fatal(err)
		}
		ops, attempts := tree(t, h.spans.Ended())
		if len(ops) != 1 {
			t.Fatalf("%d operation spans", len(ops))
		}
		op := ops[0]
		as := attempts[op.SpanContext().SpanID().String()]
		if len(as) != 3 {
			t.Fatalf("%d attempt spans under the operation", len(as))
		}
		if got := spanAttrs(op); got["retry.outcome"] != "success" || got["retry.attempts"] != "3" || got["retry.stop_reason"] != "" {
			t.Errorf("operation span %v", got)
		}
		if op.Status().Code != codes.Unset {
			t.Errorf("operation status %v", op.Status())
		}
		for i, s := range as {
			a := spanAttrs(s)
			wantClass, wantStatus := "capacity", "529"
			if i == 2 {
				wantClass, wantStatus = "success", ""
			}
			if a["retry.class"] != wantClass || a["http.response.status_code"] != wantStatus || a["retry.attempt"] != fmt.Sprint(i+1) {
				t.Errorf("attempt %d: %v", i+1, a)
			}
			if (i > 0) != (a["http.request.resend_count"] == fmt.Sprint(i)) {
				t.Errorf("attempt %d: resend count %q", i+1, a["http.request.resend_count"])
			}
			if (i < 2) != (a["retry.backoff"] != "") || a["retry.server_wait"] != "" {
				t.Errorf("attempt %d: backoff %q, server wait %q", i+1, a["retry.backoff"], a["retry.server_wait"])
			}
			if d := s.EndTime().Sub(s.StartTime()); d != 100*time.Millisecond {
				t.Errorf("attempt %d lasted %v, want the fake's 100ms", i+1, d)
			}
			if (i < 2) != (s.Status().Code == codes.Error) {
				t.Errorf("attempt %d: status %v", i+1, s.Status())
			}
		}
		// The operation's span spans its attempts and the waits between.
		if !op.StartTime().Equal(as[0].StartTime()) || !op.EndTime().Equal(as[2].EndTime()) {
			t.Errorf("operation %v–%v, attempts %v–%v", op.StartTime(), op.EndTime(), as[0].StartTime(), as[2].EndTime())
		}
		gap := as[1].StartTime().Sub(as[0].EndTime())
		if b := spanAttrs(as[0])["retry.backoff"]; fmt.Sprint(gap.Seconds()) != b {
			t.Errorf("the wait between attempts 1 and 2 is %v, the backoff attribute says %s", gap, b)
		}
	})
}

// TestRetryAfterThenOK: the server's 2 s wait is the attempt's server wait
// and its backoff.
func TestRetryAfterThenOK(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		if err := h.run(t, scripted.New(scripted.Reply{Status: 429, RetryAfter: 2}, scripted.Reply{Status: 200})); err != nil {
			t.Fatal(err)
		}
		_, attempts := tree(t, h.spans.Ended())
		var first map[string]string
		for _, as := range attempts {
			first = spanAttrs(as[0])
		}
		if first["retry.class"] != "retry-after" || first["http.response.status_code"] != "429" || first["retry.server_wait"] != "2" || first["retry.backoff"] != "2" {
			t.Errorf("first attempt %v", first)
		}
		m := h.metrics(t)
		if m["retry.wait.duration{retry.class=retry-after}"] != "1 2" || m["retry.retries{retry.class=retry-after}"] != "1" {
			t.Errorf("metrics %v", m)
		}
	})
}

// TestAlways503GivesUp: three 503s at MaxAttempts 3 give up; the operation
// span says why, and the metrics count it.
func TestAlways503GivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		err := h.run(t, scripted.New(scripted.Reply{Status: 503}), policies.WithMaxAttempts(3))
		var pe *policies.Error
		if !errors.As(err, &pe) || pe.Reason != policies.StopAttempts {
			t.Fatalf("Do: %v", err)
		}
		ops, attempts := tree(t, h.spans.Ended())
		op := ops[0]
		if a := spanAttrs(op); a["retry.outcome"] != "gave_up" || a["retry.stop_reason"] != "attempts" || a["retry.attempts"] != "3" {
			t.Errorf("operation span %v", a)
		}
		if op.Status().Code != codes.Error || !strings.Contains(op.Status().Description, "retry stopped (attempts)") {
			t.Errorf("operation status %v", op.Status())
		}
		as := attempts[op.SpanContext().SpanID().String()]
		if len(as) != 3 || spanAttrs(as[2])["retry.backoff"] != "" {
			t.Errorf("%d attempts; the last has backoff %q", len(as), spanAttrs(as[len(as)-1])["retry.backoff"])
		}
		want := map[string]string{
			"retry.attempts{retry.class=capacity}":       "3",
			"retry.retries{retry.class=capacity}":        "2",
			"retry.operations{retry.outcome=gave_up}":    "1",
			"retry.give_ups{retry.stop_reason=attempts}": "1",
		}
		m := h.metrics(t)
		for k, v := range want {
			if m[k] != v {
				t.Errorf("%s = %q, want %q (all: %v)", k, m[k], v, m)
			}
		}
		if w := m["retry.wait.duration{retry.class=capacity}"]; !strings.HasPrefix(w, "2 ") {
			t.Errorf("wait histogram %q, want 2 waits", w)
		}
		if _, ok := m["retry.coordinator.refusals{retry.stop_reason=attempts}"]; ok {
			t.Error("a give-up on attempts counted as a refusal")
		}
	})
}

// TestMetricsAcrossOperations: one Telemetry measures every operation; the
// three scripted sequences add up.
func TestMetricsAcrossOperations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		_ = h.run(t, scripted.New(scripted.Reply{Status: 529}, scripted.Reply{Status: 529}, scripted.Reply{Status: 200}))
		_ = h.run(t, scripted.New(scripted.Reply{Status: 429, RetryAfter: 2}, scripted.Reply{Status: 200}))
		_ = h.run(t, scripted.New(scripted.Reply{Status: 503}), policies.WithMaxAttempts(3))
		got := h.metrics(t)
		delete(got, "retry.wait.duration{retry.class=capacity}") // jittered: checked below
		want := map[string]string{
			"retry.attempts{retry.class=capacity}":         "5",
			"retry.attempts{retry.class=retry-after}":      "1",
			"retry.attempts{retry.class=success}":          "2",
			"retry.retries{retry.class=capacity}":          "4",
			"retry.retries{retry.class=retry-after}":       "1",
			"retry.wait.duration{retry.class=retry-after}": "1 2",
			"retry.operations{retry.outcome=success}":      "2",
			"retry.operations{retry.outcome=gave_up}":      "1",
			"retry.give_ups{retry.stop_reason=attempts}":   "1",
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("metrics\n got %v\nwant %v", got, want)
		}
	})
}

// denier is a coordinator that refuses every retry, as a spent retry budget
// does.
type denier struct{ reason policies.StopReason }

func (d denier) Admit(_ time.Time, a machine.Ask) machine.Admission {
	if a.Retry {
		return machine.Admission{Kind: machine.AdmitDeny, Reason: d.reason}
	}
	return machine.Admission{Kind: machine.AdmitPass}
}
func (denier) Observe(time.Time, int, policies.Outcome) {}
func (denier) Release(time.Time, machine.Waiter, bool)  {}

// TestCoordinatorRefusals: a budget or breaker refusal counts as a give-up
// and as a refusal, by reason.
func TestCoordinatorRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		for _, r := range []policies.StopReason{policies.StopBudget, policies.StopCircuitOpen, policies.StopThrottled} {
			_ = h.run(t, scripted.New(scripted.Reply{Status: 529}), policies.WithCoordinator(denier{r}))
		}
		m := h.metrics(t)
		for _, r := range []string{"budget", "circuit_open", "throttled"} {
			if m["retry.coordinator.refusals{retry.stop_reason="+r+"}"] != "1" || m["retry.give_ups{retry.stop_reason="+r+"}"] != "1" {
				t.Errorf("%s: %v", r, m)
			}
		}
	})
}

// TestAttemptSpanIsParent: spans the operation starts descend from its
// attempt's span.
func TestAttemptSpanIsParent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		tracer := h.tp.Tracer("test")
		api := scripted.New(scripted.Reply{Status: 200})
		_ = h.tel.Do(t.Context(), func(ctx context.Context, a policies.Attempt) error {
			ctx, span := tracer.Start(ctx, "http POST")
			defer span.End()
			return api.Op(ctx, a)
		})
		spans := h.spans.Ended()
		i := slices.IndexFunc(spans, func(s sdktrace.ReadOnlySpan) bool { return s.Name() == "http POST" })
		j := slices.IndexFunc(spans, func(s sdktrace.ReadOnlySpan) bool { return s.Name() == otelretry.AttemptSpan })
		if i < 0 || j < 0 || spans[i].Parent().SpanID() != spans[j].SpanContext().SpanID() {
			t.Errorf("the operation's own span is not a child of its attempt's")
		}
	})
}

// TestNilProviders: without providers nothing is recorded and nothing fails.
func TestNilProviders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tel, err := otelretry.New(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := tel.Do(t.Context(), scripted.New(scripted.Reply{Status: 529}, scripted.Reply{Status: 200}).Op, policies.WithRand(seeded())); err != nil {
			t.Fatal(err)
		}
	})
}

// TestRefusedToStart: an operation Do refuses (nil) ends with outcome
// "error", not a give-up.
func TestRefusedToStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		if err := h.tel.Do(t.Context(), nil); err == nil {
			t.Fatal("Do accepted a nil operation")
		}
		ops, _ := tree(t, h.spans.Ended())
		if len(ops) != 1 || spanAttrs(ops[0])["retry.outcome"] != "error" || ops[0].Status().Code != codes.Error {
			t.Fatalf("operation spans %v", ops)
		}
		m := h.metrics(t)
		if m["retry.operations{retry.outcome=error}"] != "1" || len(m) != 1 {
			t.Errorf("metrics %v", m)
		}
	})
}
