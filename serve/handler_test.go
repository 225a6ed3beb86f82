package serve_test

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
)

// Server models for the tests.
var (
	rejection529 = sim.Rejection{Status: 529, Class: policies.Capacity}
	rejection429 = sim.Rejection{Status: 429, Class: policies.RetryAfter, RetryAfter: time.Second}

	// alwaysOverloaded rejects everything with 529 after 100 ms.
	alwaysOverloaded = &sim.CapacityWindows{ResponseTime: sim.Fixed(100 * time.Millisecond),
		Phases: []sim.Phase{{Reject: rejection529}}}
	// rateLimited admits 1 request per second, then 429 with retry-after 1s.
	rateLimited = &sim.CapacityWindows{ResponseTime: sim.Fixed(200 * time.Millisecond),
		Phases: []sim.Phase{{Admit: 1, Window: time.Second, Reject: rejection429}}}
	// admitAll admits everything after 1 s.
	admitAll = &sim.CapacityWindows{ResponseTime: sim.Fixed(time.Second),
		Phases: []sim.Phase{{Admit: 1 << 30, Window: time.Second, Reject: rejection529}}}
)

const okRequest = `{"model":"claude-test","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`

// exchange is a request and what came back, with the fake time it took.
type exchange struct {
	status int
	header http.Header
	body   string
	took   time.Duration
}

// do sends one request to h in memory; call it inside a synctest bubble.
func do(t *testing.T, h http.Handler, method, path, body string) exchange {
	t.Helper()
	start := time.Now()
	req, err := http.NewRequest(method, "http://serve.test"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("content-type", "application/json")
	resp, err := (&http.Client{Transport: serve.InMemory(h)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return exchange{resp.StatusCode, resp.Header, string(b), time.Since(start)}
}

func newHandler(t *testing.T, model sim.ServerModel, opts ...serve.Option) *serve.Handler {
	t.Helper()
	h, err := serve.NewHandler(model, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Each status, header and body form the handler sends, byte for byte, and
// when it sends it (fake time, speed 10).
func TestHandlerForms(t *testing.T) {
	tests := []struct {
		name   string
		model  sim.ServerModel
		path   string
		body   string
		status int
		header []string // key, value; checked, others ignored
		want   string
		took   time.Duration
	}{
		{name: "overloaded", model: alwaysOverloaded, path: "/v1/messages", body: okRequest, status: 529,
			header: []string{"content-type", "application/json", "request-id", "req_00000000000000000001"},
			want:   `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_00000000000000000001"}`,
			took:   10 * time.Millisecond},
		{name: "admitted", model: admitAll, path: "/v1/messages", body: okRequest, status: 200,
			header: []string{"content-type", "application/json", "request-id", "req_00000000000000000001"},
			want: `{"id":"msg_00000000000000000001","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text",` +
				`"text":"This answer comes from retrysim serve: the request was admitted by the server model."}],` +
				`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":20,"output_tokens":14}}`,
			took: 100 * time.Millisecond},
		{name: "max_tokens cuts the answer", model: admitAll, path: "/v1/messages", status: 200,
			body: `{"model":"m","max_tokens":2,"messages":[{"role":"user","content":"hi"}]}`,
			want: `{"id":"msg_00000000000000000001","type":"message","role":"assistant","model":"m","content":[{"type":"text",` +
				`"text":"This answer "}],"stop_reason":"max_tokens","stop_sequence":null,"usage":{"input_tokens":18,"output_tokens":2}}`,
			took: 100 * time.Millisecond},
		{name: "not JSON", model: admitAll, path: "/v1/messages", body: `{"model":`, status: 400,
			want: `{"type":"error","error":{"type":"invalid_request_error","message":"the request body is not a JSON object: unexpected end of JSON input"},"request_id":"req_00000000000000000001"}`},
		{name: "empty body", model: admitAll, path: "/v1/messages", body: ``, status: 400,
			want: `{"type":"error","error":{"type":"invalid_request_error","message":"the request body is empty; send a JSON object"},"request_id":"req_00000000000000000001"}`},
		{name: "no model", model: admitAll, path: "/v1/messages", body: `{"max_tokens":1,"messages":[{}]}`, status: 400,
			want: `{"type":"error","error":{"type":"invalid_request_error","message":"model: required"},"request_id":"req_00000000000000000001"}`},
		{name: "no max_tokens", model: admitAll, path: "/v1/messages", body: `{"model":"m","messages":[{}]}`, status: 400,
			want: `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: required"},"request_id":"req_00000000000000000001"}`},
		{name: "zero max_tokens", model: admitAll, path: "/v1/messages", body: `{"model":"m","max_tokens":0,"messages":[{}]}`, status: 400,
			want: `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be at least 1, got 0"},"request_id":"req_00000000000000000001"}`},
		{name: "no messages", model: admitAll, path: "/v1/messages", body: `{"model":"m","max_tokens":1,"messages":[]}`, status: 400,
			want: `{"type":"error","error":{"type":"invalid_request_error","message":"messages: required, at least one message"},"request_id":"req_00000000000000000001"}`},
		{name: "wrong type", model: admitAll, path: "/v1/messages", body: `{"model":"m","max_tokens":"many","messages":[{}]}`, status: 400,
			want: `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: expected int64, got JSON string"},"request_id":"req_00000000000000000001"}`},
		{name: "two values", model: admitAll, path: "/v1/messages", body: okRequest + okRequest, status: 400,
			want: `{"type":"error","error":{"type":"invalid_request_error","message":"the request body holds more than one JSON value"},"request_id":"req_00000000000000000001"}`},
		{name: "unknown path", model: admitAll, path: "/v1/complete", body: ``, status: 404,
			want: `{"type":"error","error":{"type":"not_found_error","message":"no such endpoint: /v1/complete"},"request_id":"req_00000000000000000001"}`},
		{name: "healthz", model: admitAll, path: "/healthz", status: 200, want: "ok\n"},
		{name: "reset", model: admitAll, path: "/control/reset", status: 200, want: `{"reset":true,"seed":2}` + "\n"},
		{name: "reset with a seed", model: admitAll, path: "/control/reset?seed=7", status: 200, want: `{"reset":true,"seed":7}` + "\n"},
		{name: "reset with a bad seed", model: admitAll, path: "/control/reset?seed=-1", status: 400,
			want: `{"type":"error","error":{"type":"invalid_request_error","message":"seed: want a whole number from 0 to 18446744073709551615, got \"-1\""},"request_id":"req_00000000000000000001"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHandler(t, tt.model, serve.WithSpeed(10))
				method := http.MethodPost
				if tt.path == "/healthz" {
					method = http.MethodGet
				}
				got := do(t, h, method, tt.path, tt.body)
				if got.status != tt.status || got.body != tt.want {
					t.Errorf("got %d %s\nwant %d %s", got.status, got.body, tt.status, tt.want)
				}
				for i := 0; i+1 < len(tt.header); i += 2 {
					if v := got.header.Get(tt.header[i]); v != tt.header[i+1] {
						t.Errorf("%s: %q, want %q", tt.header[i], v, tt.header[i+1])
					}
				}
				if got.took != tt.took {
					t.Errorf("took %v, want %v", got.took, tt.took)
				}
			})
		})
	}
}

// A rate limit's retry-after is divided by the speed on the wire, and the
// real clock's time since the first request, times the speed, is the
// model's: the second request in the same model second is rejected, the
// one after the wait is admitted.
func TestHandlerRateLimitAtSpeed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, rateLimited, serve.WithSpeed(4))
		first := do(t, h, http.MethodPost, "/v1/messages", okRequest)
		second := do(t, h, http.MethodPost, "/v1/messages", okRequest)
		if first.status != 200 || first.took != 50*time.Millisecond {
			t.Fatalf("first: %d after %v, want 200 after 50ms", first.status, first.took)
		}
		if second.status != 429 || second.header.Get("retry-after") != "1" || second.header.Get("retry-after-ms") != "250" {
			t.Fatalf("second: %d retry-after %q retry-after-ms %q, want 429, 1, 250",
				second.status, second.header.Get("retry-after"), second.header.Get("retry-after-ms"))
		}
		out := policies.ClassifyResponse(second.status, second.header, []byte(second.body), time.Now())
		if want := (policies.Outcome{Class: policies.RetryAfter, Status: 429, ServerWait: 250 * time.Millisecond}); out != want {
			t.Fatalf("second reads as %+v, want %+v", out, want)
		}
		time.Sleep(out.ServerWait) // model time 0.4 s + 4·0.25 s = 1.4 s: the next window
		if third := do(t, h, http.MethodPost, "/v1/messages", okRequest); third.status != 200 {
			t.Fatalf("after the wait: %d, want 200", third.status)
		}
		if d, ok := h.ModelTime(); !ok || d != 1600*time.Millisecond {
			t.Fatalf("model time %v %v, want 1.6s", d, ok)
		}
		st := h.Stats()
		if st != (serve.Stats{Requests: 3, Admitted: 2, Rejected: 1}) {
			t.Fatalf("stats %+v", st)
		}
	})
}

// The clock starts at the first request, or at a reset, which also gives
// the model a fresh state.
func TestHandlerClockAndReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Rejects everything for 1 s, then admits.
		model := &sim.CapacityWindows{ResponseTime: sim.Fixed(0), Phases: []sim.Phase{
			{Duration: time.Second, Reject: rejection529}, {Admit: 100, Window: time.Second, Reject: rejection529}}}
		h := newHandler(t, model)
		if _, ok := h.ModelTime(); ok {
			t.Fatal("the clock runs before the first request")
		}
		time.Sleep(5 * time.Second) // idle time before the first request does not count
		if got := do(t, h, http.MethodPost, "/v1/messages", okRequest); got.status != 529 {
			t.Fatalf("first request: %d, want 529 (model time 0)", got.status)
		}
		time.Sleep(time.Second)
		if got := do(t, h, http.MethodPost, "/v1/messages", okRequest); got.status != 200 {
			t.Fatalf("after 1s: %d, want 200", got.status)
		}
		if got := do(t, h, http.MethodPost, "/control/reset", ""); got.status != 200 {
			t.Fatalf("reset: %d", got.status)
		}
		if d, ok := h.ModelTime(); !ok || d != 0 {
			t.Fatalf("after reset the clock reads %v %v", d, ok)
		}
		if got := do(t, h, http.MethodPost, "/v1/messages", okRequest); got.status != 529 {
			t.Fatalf("after reset: %d, want 529", got.status)
		}
	})
}

func TestHandlerMethodsAndSize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, admitAll, serve.WithMaxBody(100))
		got := do(t, h, http.MethodGet, "/v1/messages", "")
		if got.status != 405 || got.header.Get("allow") != "POST" || !strings.Contains(got.body, "invalid_request_error") {
			t.Errorf("GET /v1/messages: %d allow %q %s", got.status, got.header.Get("allow"), got.body)
		}
		big := `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"` + strings.Repeat("x", 200) + `"}]}`
		got = do(t, h, http.MethodPost, "/v1/messages", big)
		want := `{"type":"error","error":{"type":"request_too_large","message":"the request body is larger than 100 bytes"},"request_id":"req_00000000000000000002"}`
		if got.status != 413 || got.body != want {
			t.Errorf("too large: %d %s", got.status, got.body)
		}
		if st := h.Stats(); st.Refused != 1 || st.Requests != 1 || st.Admitted+st.Rejected != 0 {
			t.Errorf("stats %+v: the refusal should not reach the model", st)
		}
	})
}

// Over the in-flight limit the server refuses at once, itself.
func TestHandlerInFlightLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, admitAll, serve.WithMaxInFlight(2))
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { do(t, h, http.MethodPost, "/v1/messages", okRequest) })
		}
		synctest.Wait() // both wait for their response (1 s)
		got := do(t, h, http.MethodPost, "/v1/messages", okRequest)
		if got.status != 529 || got.took != 0 || !strings.Contains(got.body, "its own limit") {
			t.Errorf("third: %d after %v %s", got.status, got.took, got.body)
		}
		wg.Wait()
		if st := h.Stats(); st != (serve.Stats{Requests: 3, Admitted: 2, Refused: 1}) {
			t.Errorf("stats %+v", st)
		}
	})
}

// A streamed answer: the events in order, the deltas spread over the
// response time, the last at its end.
func TestHandlerStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, admitAll, serve.WithSpeed(2)) // response time 1 s = 500 ms real
		req, _ := http.NewRequest(http.MethodPost, "http://serve.test/v1/messages",
			strings.NewReader(`{"model":"m","max_tokens":3,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		start := time.Now()
		resp, err := (&http.Client{Transport: serve.InMemory(h)}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("content-type") != "text/event-stream" || resp.Header.Get("request-id") == "" {
			t.Fatalf("%d %v", resp.StatusCode, resp.Header)
		}
		var got []string
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				got = append(got, name+"@"+time.Since(start).String())
			}
		}
		want := "message_start@0s content_block_start@0s ping@0s " +
			"content_block_delta@125ms content_block_delta@250ms content_block_delta@375ms " +
			"content_block_stop@500ms message_delta@500ms message_stop@500ms"
		if strings.Join(got, " ") != want {
			t.Fatalf("events\n%s\nwant\n%s", strings.Join(got, " "), want)
		}
	})
}

// Metrics count requests, admissions, rejections by status and refusals.
func TestHandlerMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, rateLimited)
		do(t, h, http.MethodPost, "/v1/messages", okRequest)
		do(t, h, http.MethodPost, "/v1/messages", okRequest)
		do(t, h, http.MethodPost, "/v1/messages", "{")
		got := do(t, h, http.MethodGet, "/metrics", "")
		for _, line := range []string{
			"retrysim_serve_requests_total 3",
			"retrysim_serve_admitted_total 1",
			`retrysim_serve_rejected_total{status="429"} 1`,
			`retrysim_serve_refused_total{reason="invalid"} 1`,
			"retrysim_serve_in_flight 0",
			"retrysim_serve_model_time_seconds 0.4",
		} {
			if !strings.Contains(got.body, "\n"+line+"\n") {
				t.Errorf("metrics lack %q:\n%s", line, got.body)
			}
		}
	})
}

func TestNewHandlerRefusesBadOptions(t *testing.T) {
	for _, opts := range [][]serve.Option{
		{serve.WithSpeed(0)}, {serve.WithSpeed(-1)}, {serve.WithSpeed(1e9)},
		{serve.WithMaxBody(0)}, {serve.WithMaxInFlight(0)}, {serve.WithLog(io.Discard, 0)},
	} {
		if _, err := serve.NewHandler(admitAll, opts...); err == nil {
			t.Errorf("options accepted")
		}
	}
	if _, err := serve.NewHandler(&sim.CapacityWindows{}); err == nil {
		t.Error("an invalid model was accepted")
	}
	if _, err := serve.NewHandler(&sim.Contention{Network: sim.Fixed(0)}); err == nil || !strings.Contains(err.Error(), "decides requests after they arrive") {
		t.Errorf("a model that decides later: %v", err)
	}
	lifo := &sim.Queue{Concurrency: 1, Service: sim.Fixed(time.Millisecond), LIFO: sim.AdaptiveLIFO{Interval: time.Millisecond}}
	if _, err := serve.NewHandler(lifo); err == nil || !strings.Contains(err.Error(), "the queue server model decides requests after they arrive") {
		t.Errorf("an adaptive-LIFO queue: %v", err)
	}
}
