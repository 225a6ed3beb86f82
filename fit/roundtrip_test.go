package fit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/policies/attemptlog"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/sim/simlog"
)

// simulatedLog runs policy i of s on seed with the attempt log attached, as
// 'retrysim compare --attempt-log' does, and returns the log and the result.
func simulatedLog(t testing.TB, s *scenarios.Scenario, i int, seed uint64) ([]byte, sim.Result) {
	t.Helper()
	var buf bytes.Buffer
	cfg := s.Config(i, seed)
	rec, err := simlog.Attach(&cfg, s.Policies[i].Name, attemptlog.NewHandler(&buf))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(cfg)
	if err != nil || rec.Err() != nil {
		t.Fatal(err, rec.Err())
	}
	return buf.Bytes(), res
}

// fitLog reads and fits an attempt log.
func fitLog(t testing.TB, log []byte) *Result {
	t.Helper()
	rd, err := Open(bytes.NewReader(log), "attempt-log", Options{Name: "day.log"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Fit(rd, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// fitToFile fits a log and writes the scenario and its arrivals to dir;
// it returns the loaded scenario and the fit.
func fitToFile(t testing.TB, log []byte, format, dir string, set Settings, candidates ...string) (*scenarios.Scenario, *Result) {
	t.Helper()
	rd, err := Open(bytes.NewReader(log), format, Options{Name: "day.log"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Fit(rd, set)
	if err != nil {
		t.Fatal(err)
	}
	res.Name = "day.log"
	var yml, arr bytes.Buffer
	if err := res.WriteScenario(&yml, Output{Scenario: "fitted", Arrivals: "day.arrivals.csv", Format: "attempt-log", Candidates: candidates}); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteArrivals(&arr); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "day.yaml")
	if err := os.WriteFile(path, yml.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "day.arrivals.csv"), arr.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := scenarios.Load(path)
	if err != nil {
		t.Fatalf("the fitted scenario does not load: %v\n%s", err, yml.String())
	}
	return f.Scenarios[0], res
}

// The simulated round trip (docs/replay.md): for every built-in scenario
// whose server is a capacity trace and every policy the attempt log
// follows, the log of each of 20 seeds is fitted and the fitted scenario
// is run with the same policy on the same seed. Over the seeds, its
// completions, attempts and give-ups are within 5 % of the original's (or,
// for a count that is a small share of the operations, such as 0 give-ups
// against 1, within 1 % of the operations), and every window in which the
// log saw rejections for want of room gets the original's capacity exactly
// (admission is decided on arrival, so a window that rejected was full).
func TestSimulatedRoundTrip(t *testing.T) {
	b, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	// Under the race detector (which learns nothing from this one
	// goroutine) the first policy of each scenario, on 2 seeds.
	seeds, policiesPerScenario := uint64(20), 1000
	if racetest.Enabled {
		seeds, policiesPerScenario = 2, 1
	}
	rows := []string{"| scenario | policy | completed (original → fitted) | attempts | gave up | bound windows recovered |", "| --- | --- | --- | --- | --- | --- |"}
	for _, s := range b.Scenarios {
		cw, ok := s.Server.(*sim.CapacityWindows)
		if !ok || s.Operations() > 100_000 {
			continue // not a capacity trace; huge-burst is left to the scale tests
		}
		if g, ok := s.Workload.(*sim.Groups); ok && len(g.Members) > 1 {
			continue // client groups: one log of several policies and workloads, which a fit does not separate
		}
		for i, p := range s.Policies[:min(len(s.Policies), policiesPerScenario)] {
			cfg := s.Config(i, 1)
			if _, err := simlog.Attach(&cfg, p.Name, attemptlog.NewHandler(io.Discard)); errors.Is(err, simlog.ErrUnsupported) {
				continue
			}
			var o, f [3]int
			bound, recovered := 0, 0
			for seed := uint64(1); seed <= seeds; seed++ {
				log, orig := simulatedLog(t, s, i, seed)
				fs, res := fitToFile(t, log, "attempt-log", t.TempDir(), Settings{})
				fs.Policies = []sim.Policy{p}
				got, err := sim.Run(fs.Config(0, seed))
				if err != nil {
					t.Fatal(err)
				}
				o = [3]int{o[0] + orig.Completed, o[1] + orig.Attempts, o[2] + orig.GaveUp}
				f = [3]int{f[0] + got.Completed, f[1] + got.Attempts, f[2] + got.GaveUp}
				wins, _ := res.Capacity()
				for k, w := range wins {
					if !w.Bound {
						continue
					}
					bound++
					at := res.Origin.Sub(simlog.Origin) + time.Duration(k)*time.Second // the fit starts at the first window with an attempt
					if want, ok := capacityAt(cw.Phases, at); ok && want == w.Admit {
						recovered++
					} else {
						t.Errorf("%s/%s seed %d: window %d fitted capacity %d, the scenario's %d", s.Name, p.Name, seed, k, w.Admit, want)
					}
				}
			}
			ops := o[0] + o[2]
			for k, what := range []string{"completed", "attempts", "gave up"} {
				if d := math.Abs(float64(f[k] - o[k])); d > 0.05*float64(o[k]) && d > 0.01*float64(ops) {
					t.Errorf("%s/%s: %s %d fitted, %d original (over %d seeds)", s.Name, p.Name, what, f[k], o[k], seeds)
				}
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %d → %d | %d → %d | %d → %d | %d of %d |", s.Name, p.Name, o[0], f[0], o[1], f[1], o[2], f[2], recovered, bound))
		}
	}
	if len(rows) < 12 && !racetest.Enabled {
		t.Errorf("only %d scenario-policy pairs were eligible", len(rows)-2)
	}
	t.Log("\n" + strings.Join(rows, "\n"))
}

// capacityAt is what the capacity-windows phases admit in the 1-second
// window at t; false when a window there is not 1 s long.
func capacityAt(phases []sim.Phase, t time.Duration) (int, bool) {
	start := time.Duration(0)
	for i, ph := range phases {
		if i == len(phases)-1 || t < start+ph.Duration {
			if ph.Admit > 0 && ph.Window != time.Second {
				return 0, false
			}
			return ph.Admit, true
		}
		start += ph.Duration
	}
	return 0, false
}

// A log without rejections for want of room but with server errors fits
// to an error mix (flaky-server: every call fails with probability 0.1):
// the fitted scenario, run with the same policy on the same 4 seeds (of
// 10,000 operations each), completes, sends and gives up within 5 % (or
// 1 % of the operations).
func TestErrorMixRoundTrip(t *testing.T) {
	s := scenariotest.Builtin(t, "flaky-server")
	seeds := uint64(4)
	if racetest.Enabled {
		seeds = 1
	}
	for i, p := range s.Policies {
		var o, f [3]int
		for seed := uint64(1); seed <= seeds; seed++ {
			log, orig := simulatedLog(t, s, i, seed)
			fs, _ := fitToFile(t, log, "attempt-log", t.TempDir(), Settings{})
			if _, ok := fs.Server.(*sim.ErrorMix); !ok {
				t.Fatalf("the fitted server is a %T, not an error mix", fs.Server)
			}
			fs.Policies = []sim.Policy{p}
			got, err := sim.Run(fs.Config(0, seed))
			if err != nil {
				t.Fatal(err)
			}
			o = [3]int{o[0] + orig.Completed, o[1] + orig.Attempts, o[2] + orig.GaveUp}
			f = [3]int{f[0] + got.Completed, f[1] + got.Attempts, f[2] + got.GaveUp}
		}
		ops := o[0] + o[2]
		for k, what := range []string{"completed", "attempts", "gave up"} {
			if d := math.Abs(float64(f[k] - o[k])); d > 0.05*float64(o[k]) && d > 0.01*float64(ops) {
				t.Errorf("%s: %s %d fitted, %d original", p.Name, what, f[k], o[k])
			}
		}
		t.Logf("| flaky-server | %s | %d → %d | %d → %d | %d → %d |", p.Name, o[0], f[0], o[1], f[1], o[2], f[2])
	}
}
