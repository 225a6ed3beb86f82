package otelretry_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/policies/otelretry"
)

// stepClock is a fake clock for the example: sleeping moves it on.
type stepClock struct{ now time.Time }

func (c *stepClock) Now() time.Time { return c.now }

func (c *stepClock) Sleep(_ context.Context, d time.Duration) error {
	c.now = c.now.Add(max(d, 0))
	return nil
}

// An operation overloaded once, rate limited once, then answered: one
// operation span, three attempt spans, and the metrics. Real code passes
// its own providers (with OTLP exporters) and the real clock.
func Example() {
	spans := tracetest.NewSpanRecorder()
	reader := sdkmetric.NewManualReader()
	tel, err := otelretry.New(
		sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)),
		sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	if err != nil {
		panic(err)
	}
	clock := &stepClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	tel.Now = clock.Now

	replies := []int{529, 429, 200}
	call := func(ctx context.Context, a policies.Attempt) error {
		switch status := replies[a.Number-1]; status {
		case http.StatusOK:
			return nil
		case http.StatusTooManyRequests:
			return &policies.HTTPError{StatusCode: status, Header: http.Header{"Retry-After": {"3"}}}
		default:
			return &policies.HTTPError{StatusCode: status}
		}
	}
	_ = tel.Do(machine.WithClock(context.Background(), clock), call, // the clock: example only
		policies.WithBackoff(policies.Constant{Wait: 500 * time.Millisecond}))

	for _, s := range spans.Ended() {
		fmt.Print(s.Name(), " ", s.EndTime().Sub(s.StartTime()))
		for _, a := range s.Attributes() {
			fmt.Print(" ", a.Key, "=", a.Value.Emit())
		}
		fmt.Println()
	}
	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			for _, p := range d.DataPoints {
				fmt.Println(m.Name, p.Attributes.Encoded(attribute.DefaultEncoder()), p.Value, m.Unit)
			}
		case metricdata.Histogram[float64]:
			for _, p := range d.DataPoints {
				fmt.Println(m.Name, p.Attributes.Encoded(attribute.DefaultEncoder()), "count", p.Count, "sum", p.Sum, m.Unit)
			}
		}
	}
	// Unordered output:
	// retry.attempt 0s retry.attempt=1 retry.class=capacity http.response.status_code=529 retry.backoff=0.5
	// retry.attempt 0s retry.attempt=2 http.request.resend_count=1 retry.class=retry-after http.response.status_code=429 retry.server_wait=3 retry.backoff=3
	// retry.attempt 0s retry.attempt=3 http.request.resend_count=2 retry.class=success
	// retry.operation 3.5s retry.attempts=3 retry.outcome=success
	// retry.attempts retry.class=success 1 {attempt}
	// retry.attempts retry.class=capacity 1 {attempt}
	// retry.attempts retry.class=retry-after 1 {attempt}
	// retry.retries retry.class=capacity 1 {retry}
	// retry.retries retry.class=retry-after 1 {retry}
	// retry.operations retry.outcome=success 1 {operation}
	// retry.wait.duration retry.class=retry-after count 1 sum 3 s
	// retry.wait.duration retry.class=capacity count 1 sum 0.5 s
}
