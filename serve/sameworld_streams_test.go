package serve_test

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/anthropicsdk"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
)

// Same-world test of stream faults and the stream watchdog: operations one
// after the other against an error mix whose failures are stream faults
// of every kind. The simulator runs them through sim.Run; production runs
// policies.Do for each in a synctest bubble against serve (in memory),
// which plays the same model's faults on the fake clock, with an operation
// that reads the SSE stream, reports each text delta to the watchdog and
// returns a *policies.StreamError when the stream ends without
// message_stop. Both worlds must end every operation the same way at the
// same time, after the same attempts.

// spaced starts operation i at i·gap.
type spaced struct {
	n   int
	gap time.Duration
}

func (w spaced) Validate() error                         { return nil }
func (w spaced) Operations() int                         { return w.n }
func (w spaced) Start(i int, _ *rand.Rand) time.Duration { return time.Duration(i) * w.gap }

func completedFinal(elapsed time.Duration) string { return fmt.Sprintf("completed at +%v", elapsed) }

func streamFaultMix() *sim.ErrorMix {
	const m = time.Minute
	return &sim.ErrorMix{
		Phases: []sim.MixPhase{{Outcomes: []sim.MixOutcome{
			{P: 0.12, Fault: sim.StreamFault{Kind: sim.StallFirstByte, For: 3 * m}},
			{P: 0.12, Fault: sim.StreamFault{Kind: sim.PingOnly, For: 3 * m}},
			{P: 0.12, Fault: sim.StreamFault{Kind: sim.StallAfter, After: 3, For: 3 * m}},
			{P: 0.12, Fault: sim.StreamFault{Kind: sim.CutAfter, After: 2}},
		}}},
		Latency:      sim.Uniform{Min: time.Second, Max: 3 * time.Second},
		StreamEvents: 6,
	}
}

// streamFaultCases are the policies both same-world tests of stream faults
// run.
var streamFaultCases = []struct {
	name        string
	idle, first time.Duration
	noMidStream bool
	hedge       []machine.Spec
}{
	{"no watchdog", 0, 0, false, nil},
	{"watchdog", 700 * time.Millisecond, time.Second, false, nil},
	{"watchdog, retry before content only", 700 * time.Millisecond, time.Second, true, nil},
	{"hedged", 0, 0, false, []machine.Spec{policies.HedgeConfig{Delay: 1500 * time.Millisecond, MaxHedges: 2}}},
	{"hedged, watchdog", 700 * time.Millisecond, time.Second, false, []machine.Spec{policies.HedgeConfig{Delay: 1500 * time.Millisecond, BudgetPercent: 30, BudgetBurst: 1}}},
}

func TestSameStreamFaultsInSimulatorAndServe(t *testing.T) { sameStreamFaults(t, readSSE) }

// The same through the real anthropic-sdk-go client: the operation reads
// the stream with anthropicsdk.ReadStream, which reports the content
// events to the watchdog and the cuts as *policies.StreamError by itself.
func TestSameStreamFaultsThroughTheSDK(t *testing.T) { sameStreamFaults(t, readWithSDK) }

// A streamReader sends one streamed request to h and reads the answer, as
// the operation of an attempt with context ctx.
type streamReader func(ctx context.Context, h http.Handler) error

func sameStreamFaults(t *testing.T, read streamReader) {
	for _, tc := range streamFaultCases {
		t.Run(tc.name, func(t *testing.T) {
			const seed, ops, gap = 5, 30, 20 * time.Minute
			pol := sim.Policy{Name: "streams", Rules: policies.Policy{
				Backoff:                policies.FullJitter{Base: 500 * time.Millisecond, Factor: 2, Cap: 4 * time.Second},
				MaxAttempts:            5,
				Deadline:               8 * time.Minute,
				StreamIdleTimeout:      tc.idle,
				StreamFirstByteTimeout: tc.first,
				NoMidStreamRetries:     tc.noMidStream,
			}, Coordinators: tc.hedge}
			simFinal := make([]string, ops)
			res, err := sim.Run(sim.Config{
				Seed: seed, Server: streamFaultMix(), Workload: spaced{ops, gap}, Policy: pol,
				Observer: sim.Observer{
					OnComplete: func(at time.Duration, op int) { simFinal[op] = completedFinal(at - time.Duration(op)*gap) },
					OnGiveUp: func(at time.Duration, op int, reason policies.StopReason) {
						simFinal[op] = fmt.Sprintf("gave up (%v) at +%v", reason, at-time.Duration(op)*gap)
					},
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			faulted, _ := res.Counters.Get("stream.faulted")
			fired, _ := res.Counters.Get("stream.watchdog")
			t.Logf("%d attempts, %d faulted streams, %d ended by the watchdog, %d completed, gave up %v", res.Attempts, faulted, fired, res.Completed, res.GaveUpBy)
			if faulted < 10 || (tc.idle > 0) != (fired > 0) {
				t.Errorf("the scenario does not exercise the faults: %d faulted, %d ended by the watchdog", faulted, fired)
			}
			prodFinal, prodAttempts, prodHedges := produceStreams(t, seed, ops, gap, pol, read)
			if sent, _ := res.Counters.Get("hedge.sent"); sent != prodHedges.Sent || (tc.hedge != nil && sent == 0) {
				t.Errorf("hedges sent: simulator %d, production %d", sent, prodHedges.Sent)
			}
			if c, _ := res.Counters.Get("hedge.cancelled"); c != prodHedges.Cancelled {
				t.Errorf("copies cancelled: simulator %d, production %d", c, prodHedges.Cancelled)
			}
			if !slices.Equal(simFinal, prodFinal) {
				t.Errorf("ends differ:\nsimulator:  %v\nproduction: %v", simFinal, prodFinal)
			}
			if res.Attempts != prodAttempts {
				t.Errorf("attempts: simulator %d, production %d", res.Attempts, prodAttempts)
			}
		})
	}
}

// produceStreams runs the operations one after the other through
// policies.Do against serve in memory.
func produceStreams(t *testing.T, seed uint64, ops int, gap time.Duration, pol sim.Policy, read streamReader) (final []string, attempts int, hedges machine.HedgeStats) {
	t.Helper()
	final = make([]string, ops)
	synctest.Test(t, func(t *testing.T) {
		h, err := serve.NewHandler(streamFaultMix(), serve.WithSeed(seed))
		if err != nil {
			t.Fatal(err)
		}
		opts := []policies.Option{policies.WithPolicy(pol.Rules)}
		var hedger *policies.Hedger
		if len(pol.Coordinators) > 0 {
			c, err := pol.Coordinators[0].NewCoordinator()
			if err != nil {
				t.Fatal(err)
			}
			hedger = c.(*policies.Hedger)
			opts = append(opts, policies.WithCoordinator(hedger))
		}
		origin := time.Now()
		var mu sync.Mutex
		op := func(ctx context.Context, a policies.Attempt) error {
			mu.Lock()
			attempts++
			mu.Unlock()
			return read(ctx, h)
		}
		for i := range ops {
			start := time.Duration(i) * gap
			time.Sleep(start - time.Since(origin))
			err := policies.Do(t.Context(), op, append(opts, policies.WithRand(sim.PolicyRand(seed, i)))...)
			elapsed := time.Since(origin) - start
			var pe *policies.Error
			switch {
			case err == nil:
				final[i] = completedFinal(elapsed)
			case errors.As(err, &pe):
				final[i] = fmt.Sprintf("gave up (%v) at +%v", pe.Reason, elapsed)
			default:
				t.Fatalf("operation %d: %v", i, err)
			}
		}
		if hedger != nil {
			hedges = hedger.Stats()
		}
	})
	return final, attempts, hedges
}

// readSSE reads the SSE stream itself: it reports each text delta to the
// watchdog and returns a *policies.StreamError when the stream ends
// without message_stop.
func readSSE(ctx context.Context, h http.Handler) error {
	client := &http.Client{Transport: serve.InMemory(h)}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://serve.test/v1/messages",
		strings.NewReader(`{"model":"m","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	content := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		switch sc.Text() {
		case "event: content_block_delta":
			content++
			policies.ContentEvent(ctx)
		case "event: message_stop":
			return nil
		}
	}
	return &policies.StreamError{Content: content, Err: cmp.Or(sc.Err(), io.ErrUnexpectedEOF)}
}

// readWithSDK reads the stream with the real SDK and anthropicsdk.ReadStream.
func readWithSDK(ctx context.Context, h http.Handler) error {
	client := sdkClient(h, option.WithMaxRetries(0))
	stream := client.Messages.NewStreaming(ctx, params())
	defer stream.Close()
	_, err := anthropicsdk.ReadStream(ctx, stream)
	return err
}
