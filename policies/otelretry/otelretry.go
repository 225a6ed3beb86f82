// Package otelretry shows what the retry layer did in OpenTelemetry: a span
// per operation, a child span per attempt, and metrics of attempts,
// retries, waits, give-ups and coordinator refusals. It is an observe.Sink,
// so package policies itself stays free of OpenTelemetry.
//
// # Spans
//
// An operation is a span named "retry.operation" (kind internal) from Do's
// start to its return. Each attempt is a child span named "retry.attempt"
// (kind internal) from the attempt's start to its answer, and the
// attempt's context carries it, so spans the operation makes (an
// instrumented HTTP client's) are its children. Child spans rather than
// span events, as OpenTelemetry's HTTP conventions do for resends: each
// attempt has a duration and children of its own.
//
// Attempt span attributes:
//
//	retry.attempt              int     the attempt's number, from 1
//	http.request.resend_count  int     attempt − 1, on retries only (semantic conventions)
//	retry.copy                 int     the hedge's copy number, on hedged copies only
//	retry.model                string  the model called, with a model fallback only
//	retry.class                string  success, retry-after, capacity, transient, terminal;
//	                                   absent if Do did not classify the attempt
//	http.response.status_code  int     the HTTP status, when there was one (semantic conventions)
//	retry.server_wait          float   the server's retry-after, seconds, when given
//	retry.backoff              float   the wait chosen before the next attempt, seconds,
//	                                   when a retry followed
//	retry.fallback_to          string  the model switched to after this attempt
//
// A failed attempt's span has status Error with the error's message.
//
// Operation span attributes: retry.operation.id (when the operation has an
// id), retry.attempts (int), retry.outcome ("success", "gave_up", or
// "error" when Do refused to start: a nil operation, too many
// coordinators) and,
// on a give-up, retry.stop_reason (policies.StopReason: attempts,
// deadline, terminal, queue_full, cancelled, budget, throttled,
// circuit_open) and status Error with Do's error.
//
// # Metrics
//
// OpenTelemetry's semantic conventions name no metrics for client retries,
// so these carry the prefix "retry.":
//
//	retry.attempts                 counter    {attempt}    attempts answered, by retry.class
//	                                                       ("unclassified" when Do did not classify one)
//	retry.retries                  counter    {retry}      retries scheduled, by retry.class of the failure
//	retry.wait.duration            histogram  s            the waits chosen before retries, by retry.class
//	retry.operations               counter    {operation}  operations ended, by retry.outcome
//	retry.give_ups                 counter    {operation}  operations given up, by retry.stop_reason
//	retry.coordinator.refusals     counter    {refusal}    operations stopped by a coordinator before
//	                                                       sending, by retry.stop_reason: budget (retry
//	                                                       budget), circuit_open (breaker), throttled
//	                                                       (adaptive throttling), queue_full (throttle
//	                                                       or limiter queue)
//
// retry.wait.duration's buckets run from 10 ms to 5 minutes (WaitBuckets).
package otelretry

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/policies/observe"
)

// ScopeName is the instrumentation scope of the tracer and meter.
const ScopeName = "github.com/retrysim/retrysim/policies/otelretry"

// Span names.
const (
	OperationSpan = "retry.operation"
	AttemptSpan   = "retry.attempt"
)

// Attribute keys. Those of the semantic conventions keep their names.
const (
	KeyAttempt     = attribute.Key("retry.attempt")
	KeyResendCount = attribute.Key("http.request.resend_count")
	KeyCopy        = attribute.Key("retry.copy")
	KeyModel       = attribute.Key("retry.model")
	KeyClass       = attribute.Key("retry.class")
	KeyStatusCode  = attribute.Key("http.response.status_code")
	KeyServerWait  = attribute.Key("retry.server_wait")
	KeyBackoff     = attribute.Key("retry.backoff")
	KeyFallbackTo  = attribute.Key("retry.fallback_to")
	KeyOperationID = attribute.Key("retry.operation.id")
	KeyAttempts    = attribute.Key("retry.attempts")
	KeyOutcome     = attribute.Key("retry.outcome")
	KeyStopReason  = attribute.Key("retry.stop_reason")
)

// Metric names.
const (
	MetricAttempts   = "retry.attempts"
	MetricRetries    = "retry.retries"
	MetricWait       = "retry.wait.duration"
	MetricOperations = "retry.operations"
	MetricGiveUps    = "retry.give_ups"
	MetricRefusals   = "retry.coordinator.refusals"
)

// WaitBuckets are the bucket boundaries of retry.wait.duration, in seconds.
var WaitBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// Telemetry is an observe.Sink that records spans and metrics. Safe for
// concurrent use: make one per process (or per API key) and share it.
type Telemetry struct {
	tracer trace.Tracer

	attempts, retries, operations, giveUps, refusals metric.Int64Counter
	wait                                             metric.Float64Histogram

	// Now is the clock of Do's spans (nil: time.Now); set it before use to
	// the clock given to machine.WithClock, if any.
	Now func() time.Time
}

// New returns a Telemetry using tp and mp (nil: no spans, or no metrics).
func New(tp trace.TracerProvider, mp metric.MeterProvider) (*Telemetry, error) {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	t := &Telemetry{tracer: tp.Tracer(ScopeName)}
	if mp == nil {
		return t, nil
	}
	m := mp.Meter(ScopeName)
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	t.attempts = counter(MetricAttempts, "{attempt}", "Attempts answered, by the class of their outcome.")
	t.retries = counter(MetricRetries, "{retry}", "Retries scheduled, by the class of the failure that caused them.")
	t.operations = counter(MetricOperations, "{operation}", "Operations ended, by outcome.")
	t.giveUps = counter(MetricGiveUps, "{operation}", "Operations given up, by stop reason.")
	t.refusals = counter(MetricRefusals, "{refusal}", "Operations a coordinator stopped before sending (retry budget, circuit breaker, adaptive throttling, full queue), by stop reason.")
	var err error
	t.wait, err = m.Float64Histogram(MetricWait, metric.WithUnit("s"),
		metric.WithDescription("Waits chosen before retries (server wait or backoff), by the class of the failure."),
		metric.WithExplicitBucketBoundaries(WaitBuckets...))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return t, nil
}

// Do runs policies.Do with op and opts, traced and measured (see
// observe.Do: its hooks replace any set by policies.WithHooks).
func (t *Telemetry) Do(ctx context.Context, op policies.Operation, opts ...policies.Option) error {
	tr := observe.Start(ctx, t, "", t.Now)
	err := policies.Do(tr.Context(), tr.Wrap(op), append(opts[:len(opts):len(opts)], policies.WithHooks(tr.Hooks(policies.Hooks{})))...)
	tr.End(err)
	return err
}

// Start starts the operation's span.
func (t *Telemetry) Start(ctx context.Context, op *observe.Operation) context.Context {
	o := []trace.SpanStartOption{trace.WithTimestamp(op.Start), trace.WithSpanKind(trace.SpanKindInternal)}
	if op.ID != "" {
		o = append(o, trace.WithAttributes(KeyOperationID.String(op.ID)))
	}
	ctx, _ = t.tracer.Start(ctx, OperationSpan, o...)
	return ctx
}

// Send starts the attempt's span.
func (t *Telemetry) Send(ctx context.Context, _ *observe.Operation, a *observe.Attempt) context.Context {
	attrs := []attribute.KeyValue{KeyAttempt.Int(a.Number)}
	if a.Number > 1 {
		attrs = append(attrs, KeyResendCount.Int(a.Number-1))
	}
	if a.Copy > 0 {
		attrs = append(attrs, KeyCopy.Int(a.Copy))
	}
	if a.Model != "" {
		attrs = append(attrs, KeyModel.String(a.Model))
	}
	ctx, _ = t.tracer.Start(ctx, AttemptSpan, trace.WithTimestamp(a.Sent), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return ctx
}

// Answer ends the attempt's span, at its answer, and counts it.
func (t *Telemetry) Answer(ctx context.Context, _ *observe.Operation, a *observe.Attempt) {
	class := "unclassified"
	var attrs []attribute.KeyValue
	if a.Classified {
		class = a.Outcome.Class.String()
		attrs = append(attrs, KeyClass.String(class))
	}
	if s := a.Outcome.Status; s > 0 {
		attrs = append(attrs, KeyStatusCode.Int(s))
	}
	if w := a.Outcome.ServerWait; w > 0 {
		attrs = append(attrs, KeyServerWait.Float64(w.Seconds()))
	}
	if a.Retry {
		attrs = append(attrs, KeyBackoff.Float64(a.Backoff.Seconds()))
	}
	if a.FallbackTo != "" {
		attrs = append(attrs, KeyFallbackTo.String(a.FallbackTo))
	}
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(attrs...)
	if a.Err != nil {
		span.SetStatus(codes.Error, a.Err.Error())
	}
	span.End(trace.WithTimestamp(a.Answered))

	if t.attempts == nil {
		return
	}
	byClass := metric.WithAttributeSet(attribute.NewSet(KeyClass.String(class)))
	t.attempts.Add(ctx, 1, byClass)
	if a.Retry {
		t.retries.Add(ctx, 1, byClass)
		t.wait.Record(ctx, a.Backoff.Seconds(), byClass)
	}
}

// refusals are the stop reasons of a coordinator's refusal.
var refusals = [machine.NumStopReasons]bool{policies.StopBudget: true, policies.StopThrottled: true,
	policies.StopCircuitOpen: true, policies.StopQueueFull: true}

// End ends the operation's span and counts its end.
func (t *Telemetry) End(ctx context.Context, op *observe.Operation) {
	span := trace.SpanFromContext(ctx)
	outcome := "success"
	attrs := []attribute.KeyValue{KeyAttempts.Int(op.Attempts)}
	switch {
	case op.GaveUp != nil:
		outcome = "gave_up"
		attrs = append(attrs, KeyStopReason.String(op.GaveUp.Reason.String()))
		span.SetStatus(codes.Error, op.Err.Error())
	case op.Err != nil:
		// Not a *policies.Error: Do refused to start (a nil operation,
		// too many coordinators).
		outcome = "error"
		span.SetStatus(codes.Error, op.Err.Error())
	}
	attrs = append(attrs, KeyOutcome.String(outcome))
	span.SetAttributes(attrs...)
	span.End(trace.WithTimestamp(op.End))

	if t.operations == nil {
		return
	}
	t.operations.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(KeyOutcome.String(outcome))))
	if e := op.GaveUp; e != nil {
		byReason := metric.WithAttributeSet(attribute.NewSet(KeyStopReason.String(e.Reason.String())))
		t.giveUps.Add(ctx, 1, byReason)
		if int(e.Reason) < len(refusals) && refusals[e.Reason] {
			t.refusals.Add(ctx, 1, byReason)
		}
	}
}
