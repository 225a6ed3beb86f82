package machine

import (
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Each form Render produces, byte for byte.
func TestRenderForms(t *testing.T) {
	const (
		overloaded = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
		rateLimit  = `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit; wait as retry-after says before sending again."}}`
		spendLimit = `{"type":"error","error":{"type":"rate_limit_error","message":"The spend limit has been reached; requests fail until it is raised.","details":{"error_code":"enforced_spend_limit_reached"}}}`
		apiError   = `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`
		timeout    = `{"type":"error","error":{"type":"timeout_error","message":"The request timed out"}}`
		invalid    = `{"type":"error","error":{"type":"invalid_request_error","message":"Invalid request"}}`
		auth       = `{"type":"error","error":{"type":"authentication_error","message":"Invalid API key"}}`
		tooLarge   = `{"type":"error","error":{"type":"request_too_large","message":"The request is too large"}}`
	)
	json := "application/json"
	tests := []struct {
		name   string
		in     Outcome
		status int
		header []string // key, value, ... (exactly these)
		body   string
	}{
		{"success", Outcome{Class: Success}, 200, nil, ""},
		{"success 201", Outcome{Class: Success, Status: 201}, 201, nil, ""},
		{"success with a failure status", Outcome{Class: Success, Status: 500}, 200, nil, ""},
		{"overloaded", Outcome{Class: Capacity, Status: 529}, 529, []string{"content-type", json}, overloaded},
		{"capacity without status", Outcome{Class: Capacity}, 529, []string{"content-type", json}, overloaded},
		{"503", Outcome{Class: Capacity, Status: 503}, 503, []string{"content-type", json}, overloaded},
		{"overloaded 500", Outcome{Class: Capacity, Status: 500}, 500, []string{"content-type", json}, overloaded},
		{"overloaded with retry-after", Outcome{Class: Capacity, Status: 529, ServerWait: 3 * time.Second}, 529,
			[]string{"content-type", json, "retry-after", "3"}, overloaded},
		{"rate limited 1s", Outcome{Class: RetryAfter, Status: 429, ServerWait: time.Second}, 429,
			[]string{"content-type", json, "retry-after", "1"}, rateLimit},
		{"rate limited 100ms", Outcome{Class: RetryAfter, Status: 429, ServerWait: 100 * time.Millisecond}, 429,
			[]string{"content-type", json, "retry-after", "1", "retry-after-ms", "100"}, rateLimit},
		{"rate limited 1.5s", Outcome{Class: RetryAfter, ServerWait: 1500 * time.Millisecond}, 429,
			[]string{"content-type", json, "retry-after", "2", "retry-after-ms", "1500"}, rateLimit},
		{"rate limited 2.000000001s", Outcome{Class: RetryAfter, ServerWait: 2*time.Second + 1}, 429,
			[]string{"content-type", json, "retry-after", "3", "retry-after-ms", "2000.000001"}, rateLimit},
		{"rate limited no wait", Outcome{Class: RetryAfter, Status: 429}, 429, []string{"content-type", json}, rateLimit},
		{"rate limited negative wait", Outcome{Class: RetryAfter, ServerWait: -time.Second}, 429, []string{"content-type", json}, rateLimit},
		{"spend limit", Outcome{Class: Terminal, Status: 429}, 429, []string{"content-type", json}, spendLimit},
		{"429 told not to retry", Outcome{Class: Terminal, Status: 429, Hint: HintNoRetry}, 429,
			[]string{"content-type", json, "x-should-retry", "false"}, rateLimit},
		{"500", Outcome{Class: Transient, Status: 500}, 500, []string{"content-type", json}, apiError},
		{"transient without status", Outcome{Class: Transient}, 500, []string{"content-type", json}, apiError},
		{"504", Outcome{Class: Transient, Status: 504}, 504, []string{"content-type", json}, timeout},
		{"408", Outcome{Class: Transient, Status: 408}, 408, []string{"content-type", json}, timeout},
		{"transient 400 says retry", Outcome{Class: Transient, Status: 400}, 400,
			[]string{"content-type", json, "x-should-retry", "true"}, invalid},
		{"transient 503 cannot be", Outcome{Class: Transient, Status: 503}, 500, []string{"content-type", json}, apiError},
		{"400", Outcome{Class: Terminal, Status: 400}, 400, []string{"content-type", json}, invalid},
		{"terminal without status", Outcome{Class: Terminal}, 400, []string{"content-type", json}, invalid},
		{"401", Outcome{Class: Terminal, Status: 401}, 401, []string{"content-type", json}, auth},
		{"413", Outcome{Class: Terminal, Status: 413}, 413, []string{"content-type", json}, tooLarge},
		{"terminal 500 says stop", Outcome{Class: Terminal, Status: 500}, 500,
			[]string{"content-type", json, "x-should-retry", "false"}, apiError},
		{"terminal 529 says stop", Outcome{Class: Terminal, Status: 529}, 529,
			[]string{"content-type", json, "x-should-retry", "false"}, overloaded},
		{"terminal drops the wait", Outcome{Class: Terminal, Status: 400, ServerWait: time.Second}, 400, []string{"content-type", json}, invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Render(tt.in)
			if r.Status != tt.status {
				t.Errorf("status %d, want %d", r.Status, tt.status)
			}
			if want := hdr(tt.header...); !sameHeader(r.Header, want) {
				t.Errorf("header %v, want %v", r.Header, want)
			}
			if string(r.Body) != tt.body {
				t.Errorf("body\n%s\nwant\n%s", r.Body, tt.body)
			}
		})
	}
}

func sameHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, "\x00") != strings.Join(b[k], "\x00") {
			return false
		}
	}
	return true
}

// representable reports whether Render(o) classifies back to o exactly: a
// status Render keeps for the class, and a wait that the headers carry.
func representable(o Outcome) bool {
	s := o.Status
	var statusKept bool
	switch o.Class {
	case Success:
		statusKept = s >= 200 && s < 400
	case RetryAfter:
		statusKept = s == 429
	case Capacity:
		statusKept = s >= 500 && s <= 599
	case Transient:
		statusKept = s >= 400 && s <= 599 && s != 429 && s != 503 && s != 529
	case Terminal:
		statusKept = s >= 400 && s <= 599
	}
	waitOK := o.ServerWait >= 0 && o.ServerWait <= MaxParsedWait
	if o.Class == Success || o.Class == Terminal {
		waitOK = o.ServerWait == 0
	}
	return statusKept && waitOK
}

func checkRoundTrip(t *testing.T, o Outcome) {
	t.Helper()
	r := Render(o)
	got := ClassifyResponse(r.Status, r.Header, r.Body, now)
	if got.Class != o.Class {
		t.Fatalf("Render(%+v) reads back as class %v: %d %v %s", o, got.Class, r.Status, r.Header, r.Body)
	}
	if representable(o) && got != o {
		t.Fatalf("Render(%+v) reads back as %+v: %d %v %s", o, got, r.Status, r.Header, r.Body)
	}
	if !representable(o) && got.Status != r.Status {
		t.Fatalf("Render(%+v): status %d read as %d", o, r.Status, got.Status)
	}
}

// The round trip, over every status and class and a spread of waits: the
// class always comes back, and the whole outcome when it is representable.
func TestRenderRoundTrip(t *testing.T) {
	waits := []time.Duration{0, 1, 999, time.Microsecond, time.Millisecond, 100 * time.Millisecond,
		time.Second, 1500 * time.Millisecond, 61*time.Second + 7, time.Hour, MaxParsedWait, MaxParsedWait + 1, -time.Second}
	statuses := []int{0, 42, 600, 1000, -1}
	for s := 100; s <= 599; s++ {
		statuses = append(statuses, s)
	}
	n := 0
	for c := Success; c <= Terminal; c++ {
		for _, s := range statuses {
			for _, w := range waits {
				o := Outcome{Class: c, Status: s, ServerWait: w}
				checkRoundTrip(t, o)
				if representable(o) {
					n++
				}
			}
		}
	}
	checkRoundTrip(t, Outcome{Class: Terminal, Status: 429, Hint: HintNoRetry})
	if n < 1000 {
		t.Fatalf("only %d representable outcomes tried", n)
	}
}

// Random waits, to the nanosecond, survive the trip.
func TestRenderRoundTripRandomWaits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	classes := []struct {
		c Class
		s int
	}{{RetryAfter, 429}, {Capacity, 529}, {Capacity, 503}, {Transient, 500}, {Transient, 504}, {Transient, 408}, {Transient, 400}}
	for range 5000 {
		k := classes[rng.IntN(len(classes))]
		// Waits of every magnitude from 1 ns to MaxParsedWait.
		w := time.Duration(rng.Int64N(int64(MaxParsedWait)>>rng.IntN(50)) + 1)
		checkRoundTrip(t, Outcome{Class: k.c, Status: k.s, ServerWait: w})
	}
}

func TestRenderEventRoundTrip(t *testing.T) {
	if _, _, ok := RenderEvent(Outcome{Class: Success}); ok {
		t.Fatal("a success has no error event")
	}
	for c := RetryAfter; c <= Terminal; c++ {
		ev, data, ok := RenderEvent(Outcome{Class: c, Status: 200, ServerWait: time.Second})
		if !ok || ev != "error" {
			t.Fatalf("%v: event %q, ok %v", c, ev, ok)
		}
		if got, want := ClassifyEvent(ev, data), (Outcome{Class: c, Status: 200}); got != want {
			t.Errorf("%v: event %s reads back as %+v, want %+v", c, data, got, want)
		}
	}
}

func TestFormatMs(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-5, "0"}, {0, "0"}, {1, "0.000001"}, {250500 * time.Microsecond, "250.5"},
		{time.Second, "1000"}, {1500*time.Millisecond + 10, "1500.00001"}, {123456789, "123.456789"},
	}
	for _, tt := range tests {
		if got := FormatMs(tt.d); got != tt.want {
			t.Errorf("FormatMs(%d) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// FormatMs and ParseRetryAfterMs are inverses up to MaxParsedWait.
func FuzzFormatMs(f *testing.F) {
	for _, d := range []int64{0, 1, 999_999, 1_000_000, 1_500_000_001, int64(MaxParsedWait)} {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, d int64) {
		if d < 0 || d > int64(MaxParsedWait) {
			return
		}
		s := FormatMs(time.Duration(d))
		got, ok := ParseRetryAfterMs(s)
		if !ok || got != time.Duration(d) {
			t.Fatalf("FormatMs(%d) = %q reads back as %d, %v", d, s, got, ok)
		}
	})
}
