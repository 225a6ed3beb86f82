package serve_test

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
)

// faulty fails every request with the fault; a whole answer would take 7 s
// with 6 content events, one a second.
func faulty(f sim.StreamFault) *sim.ErrorMix {
	return &sim.ErrorMix{Phases: []sim.MixPhase{{Outcomes: []sim.MixOutcome{{P: 1, Fault: f}}}}, Latency: sim.Fixed(7 * time.Second), StreamEvents: 6}
}

// Each stream fault goes out on the real (here: fake) clock as the model
// says: which events, when, and the cut without message_stop.
func TestStreamFaultsOnTheWire(t *testing.T) {
	for _, tc := range []struct {
		fault sim.StreamFault
		want  string // event@seconds since the request, then how the body ended
	}{
		{sim.StreamFault{Kind: sim.StallFirstByte, For: 30 * time.Second}, "no response@30s"},
		{sim.StreamFault{Kind: sim.StallAfter, After: 2, For: 30 * time.Second},
			"message_start@0s content_block_start@0s ping@0s content_block_delta@1s content_block_delta@2s cut@32s"},
		{sim.StreamFault{Kind: sim.PingOnly, For: 12 * time.Second},
			"message_start@0s content_block_start@0s ping@0s ping@5s ping@10s cut@12s"},
		{sim.StreamFault{Kind: sim.CutAfter, After: 1},
			"message_start@0s content_block_start@0s ping@0s content_block_delta@1s cut@2s"},
	} {
		t.Run(tc.fault.Kind.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHandler(t, faulty(tc.fault))
				client := &http.Client{Transport: serve.InMemory(h)}
				start := time.Now()
				at := func() string { return time.Since(start).String() }
				resp, err := client.Post("http://serve.test/v1/messages", "application/json",
					strings.NewReader(`{"model":"m","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
				if err != nil {
					if got := "no response@" + at(); got != tc.want || !errors.Is(err, io.ErrUnexpectedEOF) {
						t.Errorf("got %s (%v), want %s", got, err, tc.want)
					}
					return
				}
				defer resp.Body.Close()
				var got []string
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
						got = append(got, name+"@"+at())
					}
				}
				if !errors.Is(sc.Err(), io.ErrUnexpectedEOF) {
					t.Errorf("the body ended with %v, want a cut connection", sc.Err())
				}
				got = append(got, "cut@"+at())
				if s := strings.Join(got, " "); s != tc.want {
					t.Errorf("got  %s\nwant %s", s, tc.want)
				}
			})
		})
	}
}

// A request that does not stream gets nothing until the cut.
func TestStreamFaultWithoutStreaming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, faulty(sim.StreamFault{Kind: sim.PingOnly, For: 12 * time.Second}))
		start := time.Now()
		_, err := (&http.Client{Transport: serve.InMemory(h)}).Post("http://serve.test/v1/messages", "application/json",
			strings.NewReader(`{"model":"m","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`))
		if !errors.Is(err, io.ErrUnexpectedEOF) || time.Since(start) != 12*time.Second {
			t.Errorf("err %v after %v; want a cut at 12s", err, time.Since(start))
		}
		if out := policies.ClassifyError(err, time.Now()); out.Class != policies.Transient {
			t.Errorf("the cut classifies as %+v", out)
		}
		m := do(t, h, http.MethodGet, "/metrics", "")
		if !strings.Contains(m.body, `retrysim_serve_rejected_total{status="0"} 1`) {
			t.Errorf("metrics do not count the fault as a rejection with no response:\n%s", m.body)
		}
	})
}

// validate's clients neither read streams event by event, nor run the
// watchdog, nor hedge: it refuses all three, by name.
func TestValidateRefusesStreamFaultsAndTheWatchdog(t *testing.T) {
	var ue *serve.UnsupportedError
	err := serve.CanValidate(faulty(sim.StreamFault{Kind: sim.CutAfter, After: 1}), sim.Burst{Clients: 1})
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "stream faults") {
		t.Errorf("stream faults: %v", err)
	}
	v := serve.Validation{
		Model:    &sim.CapacityWindows{Phases: []sim.Phase{{Admit: 1, Window: time.Second}}, ResponseTime: sim.Fixed(time.Millisecond)},
		Workload: sim.Burst{Clients: 1},
		Policies: []sim.Policy{{Name: "watched", Rules: policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 2, StreamIdleTimeout: time.Second}}},
		Seed:     1,
	}
	if _, err := serve.Validate(t.Context(), v); !errors.As(err, &ue) || !strings.Contains(err.Error(), "stream watchdog") {
		t.Errorf("watchdog: %v", err)
	}
	v.Policies[0].Rules.StreamIdleTimeout = 0
	v.Policies[0].Coordinators = []machine.Spec{policies.HedgeConfig{}}
	if _, err := serve.Validate(t.Context(), v); !errors.As(err, &ue) || !strings.Contains(err.Error(), "hedging") {
		t.Errorf("hedging: %v", err)
	}
}

// The real anthropic-sdk-go/v2 client, streaming, sees a stall as modelled:
// the text before it, then nothing (it does not hand pings to its caller,
// though they reach it, as TestStreamFaultsOnTheWire shows), and at the
// model's cut an error, not a finished message.
func TestSDKSeesAStall(t *testing.T) {
	for _, tc := range []struct {
		fault  sim.StreamFault
		deltas int
		cut    time.Duration
	}{
		{sim.StreamFault{Kind: sim.StallAfter, After: 2, For: 30 * time.Second}, 2, 32 * time.Second},
		{sim.StreamFault{Kind: sim.PingOnly, For: 12 * time.Second}, 0, 12 * time.Second},
		{sim.StreamFault{Kind: sim.CutAfter, After: 3}, 3, 4 * time.Second},
	} {
		t.Run(tc.fault.Kind.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				client := sdkClient(newHandler(t, faulty(tc.fault)))
				start := time.Now()
				stream := client.Messages.NewStreaming(t.Context(), params())
				deltas := 0
				for stream.Next() {
					switch stream.Current().Type {
					case "content_block_delta":
						deltas++
					case "message_stop":
						t.Error("message_stop from a faulted stream")
					}
				}
				if !errors.Is(stream.Err(), io.ErrUnexpectedEOF) || deltas != tc.deltas || time.Since(start) != tc.cut {
					t.Errorf("err %v, %d deltas, ended at %v; want unexpected EOF, %d, at %v",
						stream.Err(), deltas, time.Since(start), tc.deltas, tc.cut)
				}
			})
		})
	}
}
