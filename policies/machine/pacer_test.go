package machine

import (
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The pacer lets requests go while its copy of the bucket has room, then
// books each a start when the refill makes room for it after those booked
// before it: 60 per minute is one a second.
func TestPacerSpacesByRequests(t *testing.T) {
	p, err := NewPacer(PacerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if a := p.Admit(at(0), Ask{}); a.Kind != AdmitGrant {
		t.Fatalf("before any header: %+v", a)
	}
	p.Update(at(0), RateLimits{Requests: RateLimit{Limit: 60, Remaining: 2}})
	for i, want := range []Admission{{Kind: AdmitGrant, At: at(0)}, {Kind: AdmitGrant, At: at(0)}, {Kind: AdmitGrant, At: at(time.Second)}} {
		if got := p.Admit(at(0), Ask{}); got != want {
			t.Errorf("request %d: %+v, want %+v", i, got, want)
		}
	}
	if l := p.Limits(at(500 * time.Millisecond)); l.Requests.Remaining != 0 || l.Requests.Reset != 60500*time.Millisecond {
		t.Errorf("with a request booked at 1 s, at 0.5 s: %+v", l.Requests)
	}
	// Half a second later: the next ticket is after the one booked at 1 s.
	if got := p.Admit(at(500*time.Millisecond), Ask{}); got.Kind != AdmitGrant || !got.At.Equal(at(2*time.Second)) {
		t.Errorf("at 0.5 s: %+v", got)
	}
	// A deadline before the room comes: the hold says why it stops, and
	// books nothing.
	if got := p.Admit(at(500*time.Millisecond), Ask{Latest: at(2900 * time.Millisecond)}); got.Kind != AdmitHold || got.Cause == nil || !got.At.Equal(at(3*time.Second)) {
		t.Errorf("with a deadline: %+v", got)
	}
	if got := p.Admit(at(2*time.Second), Ask{}); got.Kind != AdmitGrant || !got.At.Equal(at(3*time.Second)) {
		t.Errorf("at 2 s: %+v", got)
	}
	if got := p.Admit(at(4*time.Second), Ask{}); got != (Admission{Kind: AdmitGrant, At: at(4 * time.Second)}) {
		t.Errorf("at 4 s, every ticket used: %+v", got)
	}
	// A header saying more than the copy does not raise it; one saying
	// less lowers it.
	p.Update(at(4*time.Second), RateLimits{Requests: RateLimit{Limit: 60, Remaining: 30}})
	if l := p.Limits(at(4 * time.Second)); l.Requests.Remaining != 0 {
		t.Errorf("after a higher header: %+v", l.Requests)
	}
	p.Update(at(10*time.Second), RateLimits{Requests: RateLimit{Limit: 60, Remaining: 3}})
	if l := p.Limits(at(10 * time.Second)); l.Requests != (RateLimit{Limit: 60, Remaining: 3, Reset: 57 * time.Second}) {
		t.Errorf("after a lower header: %+v", l.Requests)
	}
	// A new limit starts the copy afresh.
	p.Update(at(10*time.Second), RateLimits{Requests: RateLimit{Limit: 120, Remaining: 100}})
	if l := p.Limits(at(10 * time.Second)); l.Requests.Remaining != 100 {
		t.Errorf("after a new limit: %+v", l.Requests)
	}
}

// With Tokens, a request needs its tokens too: the ask's size, else the
// config's; OpenAI's direction-less tokens need input + output.
func TestPacerSpacesByTokens(t *testing.T) {
	p, _ := NewPacer(PacerConfig{Tokens: true, InputTokens: 100, OutputTokens: 50})
	p.Update(at(0), RateLimits{Requests: RateLimit{Limit: 1000, Remaining: 1000}, InputTokens: RateLimit{Limit: 6000, Remaining: 250}})
	// 100 by default, then 150 asked: 250 gone; the next 100 need 1 s
	// (100 tokens a second).
	for i, tt := range []struct {
		ask  Ask
		want Admission
	}{
		{Ask{}, Admission{Kind: AdmitGrant, At: at(0)}},
		{Ask{InputTokens: 150}, Admission{Kind: AdmitGrant, At: at(0)}},
		{Ask{}, Admission{Kind: AdmitGrant, At: at(time.Second)}},
		// Never fits (the server says 413): it takes no tokens, but its
		// request waits its turn after the ticket before it.
		{Ask{InputTokens: 7000}, Admission{Kind: AdmitGrant, At: at(time.Second)}},
	} {
		if got := p.Admit(at(0), tt.ask); got != tt.want {
			t.Errorf("request %d: %+v, want %+v", i, got, tt.want)
		}
	}
	q, _ := NewPacer(PacerConfig{Tokens: true, InputTokens: 100, OutputTokens: 50})
	q.Update(at(0), RateLimits{Tokens: RateLimit{Limit: 6000, Remaining: 200}})
	if got := q.Admit(at(0), Ask{}); got.Kind != AdmitGrant {
		t.Errorf("150 of 200: %+v", got)
	}
	if got := q.Admit(at(0), Ask{}); got.Kind != AdmitGrant || !got.At.Equal(at(time.Second)) {
		t.Errorf("150 more of 50: %+v, want a start after 100 tokens (1 s)", got)
	}
	// Without Tokens, token limits do not hold anything.
	r, _ := NewPacer(PacerConfig{})
	r.Update(at(0), RateLimits{Tokens: RateLimit{Limit: 6000, Remaining: 0}})
	if got := r.Admit(at(0), Ask{InputTokens: 100}); got.Kind != AdmitGrant {
		t.Errorf("by requests only: %+v", got)
	}
}

// Observe reads Outcome.Limits; ObserveHeader and Transport read headers.
func TestPacerLearnsFromOutcomesAndHeaders(t *testing.T) {
	p, _ := NewPacer(PacerConfig{})
	p.Observe(at(0), 1, Outcome{Class: RetryAfter, Status: 429, Limits: &RateLimits{Requests: RateLimit{Limit: 60, Remaining: 0, Reset: time.Minute}}})
	if got := p.Admit(at(0), Ask{}); !got.At.After(at(0)) {
		t.Errorf("after a 429 with remaining 0: %+v", got)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		h.Set("x-ratelimit-limit-requests", "5000")
		h.Set("x-ratelimit-remaining-requests", "0")
		h.Set("x-ratelimit-reset-requests", "12s")
	}))
	defer srv.Close()
	q, _ := NewPacer(PacerConfig{})
	resp, err := (&http.Client{Transport: q.Transport(nil)}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if l := q.Limits(time.Now()); l.Requests.Limit != 5000 || l.Requests.Remaining > 1 {
		t.Errorf("after a response through its Transport: %+v", l.Requests)
	}
	if q.ObserveHeader(time.Now(), http.Header{}) {
		t.Error("ObserveHeader found limits in no headers")
	}
}

// Workers sharing a pacer never take more than the bucket holds.
func TestPacerConcurrent(t *testing.T) {
	p, _ := NewPacer(PacerConfig{Tokens: true, InputTokens: 1})
	p.Update(at(0), RateLimits{Requests: RateLimit{Limit: 1000, Remaining: 500}, InputTokens: RateLimit{Limit: 1000, Remaining: 1000}})
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if a := p.Admit(at(0), Ask{}); a.Kind == AdmitGrant && a.At.Equal(at(0)) {
					mu.Lock()
					granted++
					mu.Unlock()
				}
				p.Observe(at(0), 1, Outcome{Limits: &RateLimits{Requests: RateLimit{Limit: 1000, Remaining: 900}}})
			}
		})
	}
	wg.Wait()
	if granted != 500 {
		t.Errorf("granted %d of 500", granted)
	}
}

// After a 429 the reset gate holds everyone until the empty limit is full
// again (or, with none empty, the slowest); other outcomes push nothing.
func TestResetGate(t *testing.T) {
	g := &ResetGate{}
	g.Observe(at(0), 1, Outcome{Class: RetryAfter, Status: 429, ServerWait: time.Second})
	g.Observe(at(0), 1, Outcome{Class: Success, Limits: &RateLimits{Requests: RateLimit{Limit: 60, Reset: time.Minute}}})
	if got := g.Admit(at(0), Ask{}); got.Kind != AdmitPass {
		t.Errorf("without a 429 that carries limits: %+v", got)
	}
	g.Observe(at(0), 1, Outcome{Class: RetryAfter, Status: 429, ServerWait: time.Second, Limits: &RateLimits{
		Requests: RateLimit{Limit: 60, Remaining: 10, Reset: 50 * time.Second}, InputTokens: RateLimit{Limit: 1000, Remaining: 0, Reset: 40 * time.Second}}})
	if got := g.Admit(at(time.Second), Ask{}); got.Kind != AdmitHold || !got.At.Equal(at(40*time.Second)) {
		t.Errorf("after a 429 with tokens empty: %+v", got)
	}
	h := &ResetGate{}
	h.Observe(at(0), 1, Outcome{Class: RetryAfter, Status: 429, Limits: &RateLimits{
		Requests: RateLimit{Limit: 60, Remaining: 10, Reset: 50 * time.Second}, InputTokens: RateLimit{Limit: 1000, Remaining: 5, Reset: 40 * time.Second}}})
	if got := h.Admit(at(0), Ask{}); !got.At.Equal(at(50 * time.Second)) {
		t.Errorf("none empty: %+v", got)
	}
}

func TestPacerConfigValidate(t *testing.T) {
	for _, c := range []PacerConfig{{InputTokens: -1}, {Window: -time.Second}, {Window: 2 * time.Hour}} {
		if c.Validate() == nil {
			t.Errorf("%+v validates", c)
		}
	}
	if c := (PacerConfig{}).Rescale(func(d time.Duration) time.Duration { return d / 10 }).(PacerConfig); c.Window != 6*time.Second {
		t.Errorf("rescaled window %v", c.Window)
	}
	// An hour's window keeps limits its arithmetic holds: a huge one is
	// bounded, and refills without overflow.
	p, err := NewPacer(PacerConfig{Window: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	p.Update(at(0), RateLimits{Requests: RateLimit{Limit: MaxPacerLimit, Remaining: 0}})
	if l := p.Limits(at(time.Hour)); l.Requests.Limit <= 0 || l.Requests.Remaining != l.Requests.Limit || l.Requests.Reset != 0 {
		t.Errorf("after an hour: %+v", l.Requests)
	}
}

type headerRoundTripper func(*http.Request) (*http.Response, error)

func (f headerRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Input and output sizes whose sum is past the int64 range make a request
// bigger than any limit: let through, taking nothing. Before, the sum
// wrapped to -1000 and such a request put 1000 tokens into the copy, so
// the next request went on an empty bucket. Concurrent callers, for -race.
func TestPacerTokenSumSaturates(t *testing.T) {
	huge := Ask{InputTokens: math.MaxInt64, OutputTokens: math.MaxInt64 - 998} // sum wraps to -1000
	p, _ := NewPacer(PacerConfig{Tokens: true})
	p.Update(at(0), RateLimits{Tokens: RateLimit{Limit: 6000, Remaining: 0}})
	if got := p.Admit(at(0), huge); got.Kind != AdmitGrant {
		t.Errorf("a request past every limit: %+v, want it let through", got)
	}
	if got := p.Admit(at(0), Ask{InputTokens: 10}); got.Kind != AdmitGrant || !got.At.Equal(at(100*time.Millisecond)) {
		t.Errorf("10 tokens on an empty bucket after it: %+v, want a start at 100 ms", got)
	}

	q, _ := NewPacer(PacerConfig{Tokens: true})
	q.Update(at(0), RateLimits{Tokens: RateLimit{Limit: 6000, Remaining: 100}})
	var wg sync.WaitGroup
	var granted atomic.Int64
	for range 8 {
		wg.Go(func() {
			for range 50 {
				q.Admit(at(0), huge)
				if a := q.Admit(at(0), Ask{InputTokens: 10}); a.Kind == AdmitGrant && a.At.Equal(at(0)) {
					granted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := granted.Load(); n != 10 {
		t.Errorf("granted %d requests of 10 tokens from 100; want 10", n)
	}
}

// Held requests get tickets in the order they asked: each its own start,
// one share apart, so each is woken once (where all would wake when the
// next share fits and all but one be held again). A header read while
// requests are booked ahead counts them as taken; a hedge finds no room
// while a ticket waits.
func TestPacerHandsOffInOrder(t *testing.T) {
	p, _ := NewPacer(PacerConfig{})
	p.Update(at(0), RateLimits{Requests: RateLimit{Limit: 60, Remaining: 0}})
	for i := range 100 {
		want := Admission{Kind: AdmitGrant, At: at(time.Duration(i+1) * time.Second)}
		if got := p.Admit(at(time.Duration(i)*time.Millisecond), Ask{}); got != want {
			t.Fatalf("request %d: %+v, want %+v", i, got, want)
		}
	}
	if p.AdmitCopy(at(50*time.Second), Ask{}) {
		t.Error("a hedge went ahead of the tickets")
	}
	// At 50 s, 50 tickets are used and 50 wait, and the copy says 0 left
	// now: a header saying 0 does not move them (the 50 waiting were not
	// sent: it cannot count them), and one saying more raises nothing.
	for _, left := range []int64{0, 10} {
		p.Update(at(50*time.Second), RateLimits{Requests: RateLimit{Limit: 60, Remaining: left}})
	}
	if got := p.Admit(at(50*time.Second), Ask{}); !got.At.Equal(at(101 * time.Second)) {
		t.Errorf("after headers at 50 s: %+v, want the ticket after the last (101 s)", got)
	}
	// A new limit (120 a minute, 0 left) starts the copy at 0 less the 51
	// booked ahead: room for the next at 50 + 52/2 = 76 s, but it waits
	// its turn after the last ticket, at 101 s.
	p.Update(at(50*time.Second), RateLimits{Requests: RateLimit{Limit: 120, Remaining: 0}})
	if got := p.Admit(at(50*time.Second), Ask{}); !got.At.Equal(at(101 * time.Second)) {
		t.Errorf("after a new limit: %+v, want 101 s", got)
	}
	// By then the new limit refilled 102 shares for the 52 booked: room.
	if got := p.Admit(at(101*time.Second), Ask{}); got != (Admission{Kind: AdmitGrant, At: at(101 * time.Second)}) {
		t.Errorf("at 101 s, the queue used: %+v, want a start now", got)
	}
}
