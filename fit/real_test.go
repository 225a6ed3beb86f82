package fit

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/policies/attemptlog"
	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
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
				fs, res := fitToFile(t, log.Bytes(), "", t.TempDir(), Settings{})
				if res.Operations != measured.Clients {
					t.Fatalf("the log has %d operations, the real run %d", res.Operations, measured.Clients)
				}
				fs.Policies = []sim.Policy{p}
				got, err := sim.Run(fs.Config(0, s.Seed))
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
						t.Errorf("%s: fitted %v, real %v (tolerance %v)", c.what, c.fitted, c.real, c.floor)
					}
				}
				t.Logf("real %d/%d/%d, fitted %d/%d/%d (completed/attempts/gave up)", measured.Completed, measured.Attempts, measured.GaveUp, got.Completed, got.Attempts, got.GaveUp)
			})
		}
	}
}
