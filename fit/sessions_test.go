package fit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// taggedSessions is an agent-sessions workload whose chain remembers each
// operation's session, so that a simulated log can name sessions as a
// production log does (the simulator's log does not).
type taggedSessions struct {
	*sim.AgentSessions
	session []int
}

func (w *taggedSessions) NewChain() sim.Chain {
	w.session = make([]int, w.Operations())
	for i := range w.Sessions {
		w.session[i] = i
	}
	return &taggedChain{w.AgentSessions.NewChain(), w}
}

type taggedChain struct {
	sim.Chain
	w *taggedSessions
}

func (c *taggedChain) Next(ended int, at time.Duration, completed bool, rng *rand.Rand) (int, time.Duration, bool) {
	i, start, ok := c.Chain.Next(ended, at, completed, rng)
	if ok {
		c.w.session[i] = c.w.session[ended]
	}
	return i, start, ok
}

func (c *taggedChain) Tokens(i int) (int, int) { return c.Chain.(sim.TokenSizer).Tokens(i) }
func (c *taggedChain) ReportCounters(cs *sim.Counters) {
	c.Chain.(sim.CounterReporter).ReportCounters(cs)
}

// sessionLog runs policy i of an agent-sessions scenario on seed with the
// attempt log on, and names each record's session ("session": "s3").
func sessionLog(t testing.TB, s *scenarios.Scenario, i int, seed uint64) ([]byte, sim.Result) {
	t.Helper()
	w := &taggedSessions{AgentSessions: s.Workload.(*sim.AgentSessions)}
	c := *s
	c.Workload = w
	log, res := simulatedLog(t, &c, i, seed)
	var out bytes.Buffer
	for _, line := range bytes.Split(bytes.TrimSpace(log), []byte("\n")) {
		var rec struct{ Op string }
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		op, err := strconv.Atoi(rec.Op)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, `{"session":"s%d",%s`+"\n", w.session[op], line[1:])
	}
	return out.Bytes(), res
}

func counter(r sim.Result, name string) int {
	n, _ := r.Counters.Get(name)
	return int(n)
}

// The sessions' round trip (docs/replay.md): bad-day-agents' log, with
// session ids, fits to a session trace of as many sessions and calls as
// the run had. Run with the same policy on the same seeds, against the
// scenario's own server (the sessions alone), every policy completes and
// fails as many sessions as the original within 5 % (or 1 session in 40)
// and makes the same calls. The whole fitted scenario (fitted server too)
// agrees as well, but for anthropic-sdk: its log's overloads arrive
// mid-stream, which the SDK does not retry and the fitted server does not
// model (it rejects them up front, and the SDK retries those).
func TestSessionsRoundTrip(t *testing.T) {
	s := scenariotest.Builtin(t, "bad-day-agents")
	// Under the race detector (which learns nothing from this one
	// goroutine) the first policy, on 2 seeds.
	seeds, pols := uint64(10), s.Policies
	if racetest.Enabled {
		seeds, pols = 2, pols[:1]
	}
	rows := []string{"| server | policy | sessions completed (original → fitted) | sessions failed | calls | attempts |", "| --- | --- | --- | --- | --- | --- |"}
	for _, ownServer := range []bool{true, false} {
		for i, p := range pols {
			var o, f [4]int
			for seed := uint64(1); seed <= seeds; seed++ {
				log, orig := sessionLog(t, s, i, seed)
				fs, _ := fitToFile(t, log, "attempt-log", t.TempDir(), Settings{})
				tr, ok := fs.Workload.(*sim.SessionTrace)
				if !ok {
					t.Fatalf("the fitted workload is a %T, not a session trace", fs.Workload)
				}
				if len(tr.Sessions) != counter(orig, "sessions.started") || tr.Operations() != orig.Clients {
					t.Fatalf("%s seed %d: fitted %d sessions of %d calls, the run had %d of %d", p.Name, seed, len(tr.Sessions), tr.Operations(), counter(orig, "sessions.started"), orig.Clients)
				}
				fs.Policies = []sim.Policy{p}
				if ownServer {
					fs.Server = s.Server
				}
				got, err := sim.Run(fs.Config(0, seed))
				if err != nil {
					t.Fatal(err)
				}
				o = [4]int{o[0] + counter(orig, "sessions.completed"), o[1] + counter(orig, "sessions.failed"), o[2] + orig.Clients, o[3] + orig.Attempts}
				f = [4]int{f[0] + counter(got, "sessions.completed"), f[1] + counter(got, "sessions.failed"), f[2] + got.Clients, f[3] + got.Attempts}
			}
			sessions := o[0] + o[1]
			if ownServer && f[2] != o[2] {
				t.Errorf("%s: %d calls fitted, %d original", p.Name, f[2], o[2])
			}
			for k, what := range []string{"sessions completed", "sessions failed"} {
				if d := math.Abs(float64(f[k] - o[k])); d > 0.05*float64(o[k]) && d > 0.025*float64(sessions) && (ownServer || p.Name != "anthropic-sdk") {
					t.Errorf("%s (own server %v): %s %d fitted, %d original (over %d seeds)", p.Name, ownServer, what, f[k], o[k], seeds)
				}
			}
			server := "fitted"
			if ownServer {
				server = "the scenario's"
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %d → %d | %d → %d | %d → %d | %d → %d |", server, p.Name, o[0], f[0], o[1], f[1], o[2], f[2], o[3], f[3]))
		}
	}
	t.Log("\n" + strings.Join(rows, "\n"))
}
