package fit

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// outageWithErrors is long-outage's day with other failures besides: 5 %
// server errors during the outage and 3 % timeouts after it, drawn before
// the capacity trace sees a request.
const outageWithErrors = `
scenarios:
  - name: outage-with-errors
    seed: 1
    server:
      type: error-mix
      response_time: 100ms
      phases:
        - {duration: 30s, failures: [{probability: 0.05, reject: server-error}]}
        - {failures: [{probability: 0.03, reject: timeout}]}
      inner:
        type: capacity-windows
        response_time: 100ms
        phases:
          - {duration: 30s, reject: overloaded}
          - {admit: 20, window: 1s}
    clients:
      count: 400
      spread: 5s
      deadline: 2m
    policies:
      - name: capped-exponential
        cap: 30s
      - name: full-jitter
        cap: 30s
      - name: gated
        cap: 30s
        throttle:
          rate: 20
`

// A log with both rejections for want of room and other failures fits to
// an error mix in front of a capacity trace: run with the same policy on
// the same 10 seeds, the fitted scenario completes, sends and gives up
// within 5 % (or 1 % of the operations) of the original, and every window
// that rejected for room gets the original's capacity. Its mix fails as
// many attempts as the original within 3 standard deviations of two
// Poisson counts (3·√(original + fitted)), counted on other seeds
// (seed + 1000): on the same seed the mix draws the very uniforms its
// probabilities were estimated from, and a stretch whose draws made more
// failures than its share gets a higher share that catches more of the
// same draws, while one with fewer can lose no more than it had: +3 % to
// +6 % on the same seeds, over 10 or 40 of them (docs/replay.md).
func TestCapacityAndErrorsRoundTrip(t *testing.T) {
	f, err := scenarios.Parse("outage-with-errors.yaml", []byte(outageWithErrors))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenarios[0]
	seeds := uint64(10)
	if racetest.Enabled {
		seeds = 2
	}
	rows := []string{"| policy | completed (original → fitted) | attempts | gave up | other failures (fitted on seeds + 1000) | bound windows recovered |", "| --- | --- | --- | --- | --- | --- |"}
	for i, p := range s.Policies {
		var o, fi [4]int
		bound, recovered := 0, 0
		for seed := uint64(1); seed <= seeds; seed++ {
			log, orig := simulatedLog(t, s, i, seed)
			fs, res := fitToFile(t, log, "attempt-log", t.TempDir(), Settings{})
			mix, ok := fs.Server.(*sim.ErrorMix)
			if !ok {
				t.Fatalf("the fitted server is a %T, not an error mix", fs.Server)
			}
			if _, ok := mix.Inner.(*sim.CapacityWindows); !ok {
				t.Fatalf("the fitted mix wraps a %T, not a capacity trace", mix.Inner)
			}
			fs.Policies = []sim.Policy{p}
			got, err := sim.Run(fs.Config(0, seed))
			if err != nil {
				t.Fatal(err)
			}
			flog, _ := simulatedLog(t, fs, 0, seed+1000)
			o = [4]int{o[0] + orig.Completed, o[1] + orig.Attempts, o[2] + orig.GaveUp, o[3] + otherFailures(t, log)}
			fi = [4]int{fi[0] + got.Completed, fi[1] + got.Attempts, fi[2] + got.GaveUp, fi[3] + otherFailures(t, flog)}
			wins, _ := res.Capacity()
			for k, w := range wins {
				if !w.Bound {
					continue
				}
				bound++
				want, _ := capacityAt([]sim.Phase{{Duration: 30 * time.Second}, {Admit: 20, Window: time.Second}}, res.Origin.Sub(time.Unix(0, 0))+time.Duration(k)*time.Second)
				if w.Admit == want {
					recovered++
				} else {
					t.Errorf("%s seed %d: window %d fitted capacity %d, the scenario's %d", p.Name, seed, k, w.Admit, want)
				}
			}
		}
		ops := o[0] + o[2]
		for k, what := range []string{"completed", "attempts", "gave up"} {
			if d := math.Abs(float64(fi[k] - o[k])); d > 0.05*float64(o[k]) && d > 0.01*float64(ops) {
				t.Errorf("%s: %s %d fitted, %d original (over %d seeds)", p.Name, what, fi[k], o[k], seeds)
			}
		}
		if d := math.Abs(float64(fi[3] - o[3])); d > 3*math.Sqrt(float64(fi[3]+o[3])) {
			t.Errorf("%s: other failures %d fitted (seeds + 1000), %d original", p.Name, fi[3], o[3])
		}
		rows = append(rows, fmt.Sprintf("| %s | %d → %d | %d → %d | %d → %d | %d → %d | %d of %d |", p.Name, o[0], fi[0], o[1], fi[1], o[2], fi[2], o[3], fi[3], recovered, bound))
	}
	t.Log("\n" + strings.Join(rows, "\n"))
}

// otherFailures counts a log's failed attempts that were not for want
// of room.
func otherFailures(t *testing.T, log []byte) int {
	n := 0
	for _, w := range fitLog(t, log).Windows {
		for rej, k := range w.Rejected {
			if !isCapacity(rej) {
				n += k
			}
		}
	}
	return n
}
