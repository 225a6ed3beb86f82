package sim_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
)

// These tests run one scripted failure sequence through the simulator and
// through the production loop (policies.Do under testing/synctest) and check
// that both make the same attempts at the same times and end the same way.
// Both sides use the same server model, the same policy value and the same
// random stream; the production side sees the server's answers as HTTP
// errors and classifies them with policies.ClassifyResponse.

type attemptRecord struct {
	at       time.Duration
	admitted bool
}

func (a attemptRecord) String() string { return fmt.Sprintf("%v:%v", a.at, a.admitted) }

// events is what the hooks saw, in the fields both worlds share: the
// simulator has no Go errors, so Err, Last and Cause are left out.
type events struct {
	retries   []policies.RetryEvent
	giveUps   []string
	fallbacks []policies.FallbackEvent
}

func (e *events) hooks() policies.Hooks {
	return policies.Hooks{
		OnRetryScheduled: func(ev policies.RetryEvent) {
			ev.Err = nil
			e.retries = append(e.retries, ev)
		},
		OnGiveUp: func(err *policies.Error) {
			e.giveUps = append(e.giveUps, fmt.Sprintf("%v after %d in %v, last %+v", err.Reason, err.Attempts, err.Elapsed, err.LastOutcome))
		},
		OnFallback: func(ev policies.FallbackEvent) { e.fallbacks = append(e.fallbacks, ev) },
	}
}

func sameEvents(t *testing.T, simEv, prodEv *events) {
	t.Helper()
	if !slices.Equal(simEv.retries, prodEv.retries) {
		t.Errorf("retry events differ:\nsimulator:  %+v\nproduction: %+v", simEv.retries, prodEv.retries)
	}
	if !slices.Equal(simEv.giveUps, prodEv.giveUps) {
		t.Errorf("give-ups differ:\nsimulator:  %v\nproduction: %v", simEv.giveUps, prodEv.giveUps)
	}
}

// simulate runs one client through sim.Run.
func simulate(t *testing.T, seed uint64, server *sim.CapacityWindows, pol sim.Policy, ev *events) ([]attemptRecord, sim.Result) {
	t.Helper()
	var recs []attemptRecord
	res, err := sim.Run(sim.Config{
		Seed:     seed,
		Server:   server,
		Workload: sim.Burst{Clients: 1},
		Policy:   pol,
		Observer: sim.Observer{OnDecision: func(at time.Duration, _ int, class policies.Class) {
			recs = append(recs, attemptRecord{at, class == policies.Success})
		}},
		Hooks: ev.hooks(),
	})
	if err != nil {
		t.Fatalf("sim.Run: %v", err)
	}
	return recs, res
}

// produce runs the same client through policies.Do in a synctest bubble.
func produce(t *testing.T, seed uint64, server *sim.CapacityWindows, pol sim.Policy, ev *events) (recs []attemptRecord, elapsed time.Duration, err error) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		arrive := sim.NewServerModel(server, seed)
		origin := time.Now()
		op := func(ctx context.Context, a policies.Attempt) error {
			now := time.Since(origin)
			admitted, rej, respondAt := arrive(now)
			recs = append(recs, attemptRecord{now, admitted})
			time.Sleep(respondAt - now)
			if admitted {
				return nil
			}
			return httpRejection(rej)
		}
		opts := []policies.Option{
			policies.WithPolicy(pol.Rules),
			policies.WithRand(rand.New(sim.ClientPolicyStream(seed, 0))),
			policies.WithHooks(ev.hooks()),
		}
		opts = append(opts, sharedOptions(t, pol)...)
		err = policies.Do(t.Context(), op, opts...)
		elapsed = time.Since(origin)
	})
	return recs, elapsed, err
}

// httpRejection is the HTTP error a real server would send for rej.
func httpRejection(rej sim.Rejection) error {
	if rej.Status == 0 {
		// No response at all: a read that timed out (Transient, Status 0).
		return &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	}
	h := http.Header{}
	if rej.RetryAfter > 0 {
		h.Set("retry-after", strconv.FormatFloat(rej.RetryAfter.Seconds(), 'f', -1, 64))
	}
	var body string
	switch rej.Class {
	case policies.Capacity:
		body = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	case policies.RetryAfter:
		body = `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`
	case policies.Terminal:
		body = string(machine.Render(rej.Outcome()).Body) // a 429 is a spend limit
	}
	return &policies.HTTPError{StatusCode: rej.Status, Header: h, Body: []byte(body)}
}

func fullJitter(maxAttempts int, deadline time.Duration, gate bool) sim.Policy {
	return sim.Policy{
		Name: "full-jitter",
		Rules: policies.Policy{
			Backoff:     policies.FullJitter{Base: 500 * time.Millisecond, Factor: 2, Cap: 8 * time.Second},
			MaxAttempts: maxAttempts,
			Deadline:    deadline,
		},
		Coordinators: gates(gate),
	}
}

// gates is a shared gate if gate is true, else nothing.
func gates(gate bool) []machine.Spec {
	if gate {
		return []machine.Spec{machine.GateConfig{}}
	}
	return nil
}

func TestSameAttemptsInSimulatorAndProduction(t *testing.T) {
	const seed = 42
	// 529 for 1.5 s, then 429 with retry-after 2 s until 4 s, then 503
	// until 5 s, then one admission per second.
	server := &sim.CapacityWindows{
		Phases: []sim.Phase{
			{Duration: 1500 * time.Millisecond, Reject: sim.Rejection{Status: 529, Class: policies.Capacity}},
			{Duration: 2500 * time.Millisecond, Reject: sim.Rejection{Status: 429, Class: policies.RetryAfter, RetryAfter: 2 * time.Second}},
			{Duration: time.Second, Reject: sim.Rejection{Status: 503, Class: policies.Capacity}},
			{Admit: 1, Window: time.Second, Reject: sim.Rejection{Status: 529, Class: policies.Capacity}},
		},
		ResponseTime: sim.Fixed(100 * time.Millisecond),
	}
	pol := fullJitter(8, 20*time.Second, true)

	simEv, prodEv := &events{}, &events{}
	simRecs, res := simulate(t, seed, server, pol, simEv)
	prodRecs, elapsed, err := produce(t, seed, server, pol, prodEv)
	sameEvents(t, simEv, prodEv)

	if !slices.Equal(simRecs, prodRecs) {
		t.Fatalf("attempts differ:\nsimulator:  %v\nproduction: %v", simRecs, prodRecs)
	}
	if err != nil || res.Completed != 1 {
		t.Fatalf("outcomes: production %v, simulator completed %d", err, res.Completed)
	}
	if elapsed != res.LastCompletion {
		t.Errorf("completion: production at %v, simulator at %v", elapsed, res.LastCompletion)
	}
	// The script must exercise what it claims: capacity failures, a
	// retry-after, and a success.
	statuses := map[int]bool{}
	arrive := sim.NewServerModel(server, seed)
	for _, r := range simRecs {
		if _, rej, _ := arrive(r.at); !r.admitted {
			statuses[rej.Status] = true
		}
	}
	if !statuses[529] || !statuses[429] || !simRecs[len(simRecs)-1].admitted {
		t.Errorf("sequence %v does not cover 529, 429 and a success", simRecs)
	}
	if len(simEv.retries) != len(simRecs)-1 {
		t.Errorf("%d retry events for %d attempts", len(simEv.retries), len(simRecs))
	}
	t.Logf("attempts: %v", simRecs)
	t.Logf("retries: %+v", simEv.retries)
}

func TestSameGiveUpInSimulatorAndProduction(t *testing.T) {
	const seed = 7
	server := &sim.CapacityWindows{
		Phases:       []sim.Phase{{Reject: sim.Rejection{Status: 529, Class: policies.Capacity}}},
		ResponseTime: sim.Fixed(100 * time.Millisecond),
	}
	pol := fullJitter(0, 5*time.Second, false)

	simEv, prodEv := &events{}, &events{}
	simRecs, res := simulate(t, seed, server, pol, simEv)
	prodRecs, _, err := produce(t, seed, server, pol, prodEv)
	sameEvents(t, simEv, prodEv)
	if len(simEv.giveUps) != 1 {
		t.Errorf("give-up events %v, want one", simEv.giveUps)
	}

	if !slices.Equal(simRecs, prodRecs) {
		t.Fatalf("attempts differ:\nsimulator:  %v\nproduction: %v", simRecs, prodRecs)
	}
	var pe *policies.Error
	if !errors.As(err, &pe) || res.GaveUp != 1 || res.GaveUpBy[pe.Reason] != 1 || pe.Reason != policies.StopDeadline {
		t.Fatalf("outcomes: production %v, simulator gave up by %v", err, res.GaveUpBy)
	}
	if pe.Attempts != res.Attempts || len(simRecs) < 3 {
		t.Errorf("attempts: production %d, simulator %d", pe.Attempts, res.Attempts)
	}
}
