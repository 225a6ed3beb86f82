package serve_test

import (
	"bufio"
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
)

// firstSlow answers its first request after a minute and every other one
// after 20 ms.
type firstSlow struct{}

func (firstSlow) Validate() error                 { return nil }
func (firstSlow) NewServer(*rand.Rand) sim.Server { return &firstSlowState{} }

type firstSlowState struct{ n int }

func (s *firstSlowState) Arrive(now time.Duration, _ sim.Request) sim.Response {
	s.n++
	if s.n == 1 {
		return sim.Response{At: now + time.Minute}
	}
	return sim.Response{At: now + 20*time.Millisecond}
}

// Do hedges against serve over real loopback sockets (the real clock,
// every wait bounded): the hedge wins, the slow copy's request is
// cancelled, and serve sees its client go rather than serving it for a
// minute.
func TestDoHedgesAgainstServeOnLoopback(t *testing.T) {
	srv, err := serve.Listen("127.0.0.1:0", firstSlow{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	h, err := policies.NewHedger(policies.HedgeConfig{Delay: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var winner atomic.Int32
	op := func(ctx context.Context, a policies.Attempt) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/messages", strings.NewReader(okRequest))
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return &policies.HTTPError{StatusCode: resp.StatusCode}
		}
		winner.Store(int32(a.Copy))
		return nil
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := policies.Do(ctx, op, policies.WithCoordinator(h), policies.WithMaxAttempts(2)); err != nil {
		t.Fatal(err)
	}
	if winner.Load() != 1 {
		t.Errorf("copy %d won; want the hedge", winner.Load())
	}
	if st := h.Stats(); st != (machine.HedgeStats{Sent: 1, Cancelled: 1}) {
		t.Errorf("hedger stats %+v", st)
	}
	waitFor(t, 5*time.Second, "serve to see the cancelled copy's client go", func() bool {
		st := srv.Handler.Stats()
		return st.Requests == 2 && st.InFlight == 0
	})
}

// Do's stream watchdog over real loopback sockets: every stream stalls
// after two text deltas for a minute; the watchdog ends each attempt, the
// operation gives up after its attempts, and serve sees the clients go.
// The real clock makes no promise on a loaded machine that a delta comes
// within the idle timeout, so the test asserts bounds (at most 2 deltas
// an attempt, each attempt ended by the watchdog, not by the minute's
// cut); the exact counts are the synctest tests' (sameworld_streams_test.go).
func TestDoWatchdogAgainstServeOnLoopback(t *testing.T) {
	model := &sim.ErrorMix{Phases: []sim.MixPhase{{Outcomes: []sim.MixOutcome{{P: 1,
		Fault: sim.StreamFault{Kind: sim.StallAfter, After: 2, For: time.Minute}}}}},
		Latency: sim.Fixed(70 * time.Millisecond), StreamEvents: 6}
	srv, err := serve.Listen("127.0.0.1:0", model)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	var seen []int
	op := func(ctx context.Context, a policies.Attempt) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/messages",
			strings.NewReader(`{"model":"m","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		n := 0
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if sc.Text() == "event: content_block_delta" {
				n++
				policies.ContentEvent(ctx)
			}
		}
		seen = append(seen, n)
		return &policies.StreamError{Content: n, Err: sc.Err()}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	err = policies.Do(ctx, op, policies.WithPolicy(policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 2,
		StreamIdleTimeout: 200 * time.Millisecond}))
	var pe *policies.Error
	var se *policies.StreamError
	if !errors.As(err, &pe) || pe.Reason != policies.StopAttempts || !errors.As(pe.Last, &se) || !se.Stalled || se.Content > 2 ||
		pe.LastOutcome.Class != policies.Transient {
		t.Fatalf("err %v; want StopAttempts after a stall the watchdog ended, with at most 2 content events", err)
	}
	if len(seen) != 2 || seen[0] > 2 || seen[1] > 2 {
		t.Errorf("content events per attempt %v, want 2 attempts of at most 2", seen)
	}
	waitFor(t, 5*time.Second, "serve to see the stalled clients go", func() bool {
		st := srv.Handler.Stats()
		return st.Requests == 2 && st.InFlight == 0
	})
}
