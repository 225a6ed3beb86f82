package fit

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/otelretry"
)

// collector stands in for the OpenTelemetry collector's OTLP/HTTP receiver
// and file exporter: every export request becomes one line of OTLP JSON.
func collector(t *testing.T) (*httptest.Server, *bytes.Buffer) {
	var out bytes.Buffer
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &req)
		}
		line, err2 := protojson.Marshal(&req)
		if err != nil || err2 != nil {
			t.Errorf("collector: %v %v", err, err2)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		out.Write(line)
		out.WriteByte('\n')
		mu.Unlock()
		resp, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(resp)
	}))
	t.Cleanup(srv.Close)
	return srv, &out
}

// The foreign round trip (docs/replay.md): 12 clients retry with full
// jitter through otelretry's spans against a scripted server that rejects
// every request (529) for 2 s, then admits 3 in each 1-second window,
// every answer after 100 ms. The OpenTelemetry SDK's own OTLP/HTTP
// exporter sends the spans to a collector stand-in that writes OTLP JSON;
// that file fits to the script: windows 0-1 admit nothing, every later
// window that rejected admits 3, a fixed 100 ms response time, and 12
// arrivals at 0.
func TestForeignOTLP(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tel, err := otelretry.New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), nil)
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var mu sync.Mutex
		admitted := map[time.Duration]int{}
		op := func(ctx context.Context, _ policies.Attempt) error {
			at := time.Since(start)
			mu.Lock()
			w := at.Truncate(time.Second)
			ok := at >= 2*time.Second && admitted[w] < 3
			if ok {
				admitted[w]++
			}
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
			if !ok {
				return &policies.HTTPError{StatusCode: 529}
			}
			return nil
		}
		var wg sync.WaitGroup
		for i := range 12 {
			wg.Go(func() {
				tel.Do(t.Context(), op, policies.WithMaxAttempts(20),
					policies.WithBackoff(policies.FullJitter{Base: 500 * time.Millisecond, Factor: 2, Cap: 4 * time.Second}),
					policies.WithRand(rand.New(rand.NewPCG(uint64(i), 7))))
			})
		}
		wg.Wait()
	})
	srv, lines := collector(t)
	exp, err := otlptracehttp.New(t.Context(), otlptracehttp.WithEndpointURL(srv.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(t.Context(), rec.Ended()); err != nil {
		t.Fatal(err)
	}
	if err := exp.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, res := fitToFile(t, lines.Bytes(), "", t.TempDir(), Settings{})
	if res.Operations != 12 || res.Completed != 12 || res.OperationRecords != 12 {
		t.Errorf("%d operations, %d completed, %d operation spans; want 12 of each", res.Operations, res.Completed, res.OperationRecords)
	}
	wins, _ := res.Capacity()
	bound := 0
	for k, w := range wins {
		switch {
		case k < 2 && (!w.Bound || w.Admit != 0):
			t.Errorf("window %d: %+v, want bound at 0", k, w)
		case k >= 2 && w.Bound && w.Admit != 3:
			t.Errorf("window %d: %+v, want 3", k, w)
		case k >= 2 && w.Bound:
			bound++
		}
	}
	if bound == 0 {
		t.Errorf("no window after the outage rejected: %+v", wins)
	}
	if lat := res.FitLatency(); lat.YAML != "100ms" {
		t.Errorf("response time %s, want 100ms", lat.YAML)
	}
	var arrivals int
	res.EachArrival(func(at time.Duration, n int) {
		if at != 0 {
			t.Errorf("%d arrivals at %v", n, at)
		}
		arrivals += n
	})
	if arrivals != 12 {
		t.Errorf("%d arrivals, want 12", arrivals)
	}
}
