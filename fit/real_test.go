package fit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/policies/attemptlog"
	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/sim/simlog"
)

// lockedBuffer is a buffer the clients' goroutines write to.
type lockedBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.Write(p)
}

// The real round trip (docs/replay.md): a scenario is served (serve's
// handler, over the in-memory transport, in a synctest bubble so that
// every wait is exact), real clients run each policy through policies.Do
// with the attempt log on, as 'retrysim validate' runs them; the log,
// which knows nothing of the scenario, is fitted, and the fitted
// scenario's simulation with the same policy agrees with what the real
// clients measured within validate's floors: completions and give-ups
// within 1 client, attempts within 2 % (at least 1).
func TestRealRoundTrip(t *testing.T) {
	for _, name := range []string{"overload-burst", "rate-limited-burst", "long-outage"} {
		s := scenariotest.Builtin(t, name)
		for _, p := range s.Policies {
			t.Run(name+"/"+p.Name, func(t *testing.T) {
				var log lockedBuffer
				var measured sim.Result
				synctest.Test(t, func(t *testing.T) {
					v := serve.Validation{Model: s.Server, Workload: s.Workload, Policies: []sim.Policy{p}, Seed: s.Seed, Speed: 1,
						Do: attemptlog.New(&log).Do,
						Connect: func(h *serve.Handler) (string, http.RoundTripper, func(), error) {
							return "http://serve.test", serve.InMemory(h), func() {}, nil
						}}
					cs, err := serve.Validate(context.Background(), v)
					if err != nil {
						t.Fatal(err)
					}
					measured = cs[0].Measured
				})
				agreesWithReal(t, log.Bytes(), p, s.Seed, measured)
			})
		}
	}
}

// realDisagreements fits a real run's log and compares the fitted
// scenario's simulation with policy p with what the real clients
// measured, within validate's floors: completions and give-ups within 1
// client, attempts within 2 % (at least 1). It returns each metric that
// disagrees, and the counts.
func realDisagreements(t *testing.T, log []byte, p sim.Policy, seed uint64, measured sim.Result) (problems []string, counts string) {
	t.Helper()
	fs, res := fitToFile(t, log, "", t.TempDir(), Settings{})
	if res.Operations != measured.Clients {
		t.Fatalf("the log has %d operations, the real run %d", res.Operations, measured.Clients)
	}
	fs.Policies = []sim.Policy{p}
	got, err := sim.Run(fs.Config(0, seed))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what                string
		fitted, real, floor float64
	}{
		{"completed", float64(got.Completed), float64(measured.Completed), serve.CountFloor.Abs},
		{"gave up", float64(got.GaveUp), float64(measured.GaveUp), serve.CountFloor.Abs},
		{"attempts", float64(got.Attempts), float64(measured.Attempts), max(serve.SendFloor.Abs, serve.SendFloor.Rel*float64(measured.Attempts))},
	} {
		if math.Abs(c.fitted-c.real) > c.floor {
			problems = append(problems, fmt.Sprintf("%s: fitted %v, real %v (tolerance %v)", c.what, c.fitted, c.real, c.floor))
		}
	}
	return problems, fmt.Sprintf("real %d/%d/%d, fitted %d/%d/%d (completed/attempts/gave up)", measured.Completed, measured.Attempts, measured.GaveUp, got.Completed, got.Attempts, got.GaveUp)
}

// agreesWithReal fails t for each metric realDisagreements finds.
func agreesWithReal(t *testing.T, log []byte, p sim.Policy, seed uint64, measured sim.Result) {
	t.Helper()
	problems, counts := realDisagreements(t, log, p, seed, measured)
	for _, pr := range problems {
		t.Error(pr)
	}
	t.Log(counts)
}

// The real round trip on the real clock (.ci/run runs it, about 11 s):
// overload-burst served on a loopback port at speed 3, each policy's
// clients run through policies.Do with the attempt log on, the log put
// back in model time (its times from the first, and its waits, times 3)
// and fitted. For full-jitter and gated, whose real runs agree with the
// scenario's simulation (validate), the fitted scenario's simulation must
// agree with the real run within validate's floors, as on fake time
// (TestRealRoundTrip). immediate and capped-exponential are reported, not
// required: their 20 clients retry in step, and on a busy machine the
// fit of their real log often misses by a few attempts where the real
// run and the simulation agree (capped-exponential: real and simulated
// 18/102/2, fitted 18/108/2 or 20/96/0, at load average 15 on 2 cores).
// The likely cause, not yet shown: a real log's response times include
// the loopback's delay both ways (a 100 ms server logged at median
// 105.5 ms, p99 146 ms, in model time at speed 3), so the fitted server is
// slower and jittered, and clients that retried in step at the edge of a
// window (capped-exponential's waves) land in others.
func TestRealRoundTripOnTheRealClock(t *testing.T) {
	if os.Getenv("RETRYSIM_REAL_CLOCK") != "1" {
		t.Skip("runs clients on the real clock (about 11 s): set RETRYSIM_REAL_CLOCK=1, as .ci/run does")
	}
	const speed = 3
	s := scenariotest.Builtin(t, "overload-burst")
	required := map[string]bool{"full-jitter": true, "gated": true}
	compared := 0
	for _, p := range s.Policies {
		var log lockedBuffer
		v := serve.Validation{Model: s.Server, Workload: s.Workload, Policies: []sim.Policy{p}, Seed: s.Seed, Speed: speed, Do: attemptlog.New(&log).Do}
		cs, err := serve.Validate(context.Background(), v)
		if err != nil {
			t.Fatal(err)
		}
		problems, counts := realDisagreements(t, inModelTime(t, log.Bytes(), speed), p, s.Seed, cs[0].Measured)
		about := fmt.Sprintf("simulated %d/%d/%d, %s; the real run agrees with the simulation: %v", cs[0].Simulated.Completed, cs[0].Simulated.Attempts, cs[0].Simulated.GaveUp, counts, cs[0].Agree())
		if !required[p.Name] {
			t.Logf("%s (not required): %s; the fit with the real run: %v %v", p.Name, about, len(problems) == 0, problems)
			continue
		}
		compared++
		for _, pr := range problems {
			t.Errorf("%s: %s", p.Name, pr)
		}
		t.Logf("%s: %s", p.Name, about)
	}
	if compared != len(required) {
		t.Errorf("%d of the %d required policies were compared", compared, len(required))
	}
}

// inModelTime rewrites an attempt log of a run at speed as a simulated
// log is written: every time as its distance from the log's first time
// (the first client's start, about when the server's first window
// began), times speed, from simlog.Origin; every wait times speed.
func inModelTime(t *testing.T, log []byte, speed float64) []byte {
	t.Helper()
	lines := bytes.Split(bytes.TrimSpace(log), []byte("\n"))
	var origin time.Time
	for _, l := range lines {
		var r struct{ Sent, Start string }
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{r.Sent, r.Start} {
			if at, err := time.Parse(time.RFC3339Nano, s); err == nil && (origin.IsZero() || at.Before(origin)) {
				origin = at
			}
		}
	}
	var out bytes.Buffer
	for _, l := range lines {
		var m map[string]any
		d := json.NewDecoder(bytes.NewReader(l))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"sent", "answered", "start", "end"} {
			if s, ok := m[k].(string); ok {
				at, err := time.Parse(time.RFC3339Nano, s)
				if err != nil {
					t.Fatal(err)
				}
				m[k] = simlog.Origin.Add(time.Duration(float64(at.Sub(origin)) * speed)).Format(time.RFC3339Nano)
			}
		}
		for _, k := range []string{"server_wait_ms", "backoff_ms"} {
			if n, ok := m[k].(json.Number); ok {
				f, err := n.Float64()
				if err != nil {
					t.Fatal(err)
				}
				m[k] = f * speed
			}
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(append(b, '\n'))
	}
	return out.Bytes()
}
