package simlog_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/golden"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/attemptlog"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/sim/simlog"
)

// small is a short overload: 6 clients, the server rejects for 2 s and
// then admits 4 a second; full-jitter makes 3 attempts at most (some
// give up), gated 8.
const small = `scenarios:
  - name: s
    server:
      phases:
        - duration: 2s
          reject: overloaded
        - admit: 4
          window: 1s
    clients:
      count: 6
      max_attempts: 3
      deadline: 20s
    policies:
      - name: full-jitter
      - name: gated
        max_attempts: 8
`

func logRun(t *testing.T, i int) ([]byte, sim.Result) {
	t.Helper()
	f, err := scenarios.Parse("small.yaml", []byte(small))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenarios[0]
	cfg := s.Config(i, 7)
	var buf bytes.Buffer
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

func TestSimulatedLogGolden(t *testing.T) {
	var all []byte
	for i := range 2 {
		b, _ := logRun(t, i)
		all = append(all, b...)
	}
	golden.Check(t, "small", all)
}

// TestSimulatedLogAgreesWithResult: the log tells the run the result
// counts: its attempts, completions and give-ups by reason, one operation
// record per operation, and each operation's attempts numbered 1, 2, ...
// in time order.
func TestSimulatedLogAgreesWithResult(t *testing.T) {
	for i := range 2 {
		b, res := logRun(t, i)
		attempts, completed, gaveUp := 0, 0, 0
		byReason := map[string]int{}
		next := map[string]int{}
		last := map[string]time.Time{}
		ended := map[string]bool{}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			var r map[string]any
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			if r["schema"] != attemptlog.Schema || r["policy"] == nil {
				t.Fatalf("record %v", r)
			}
			op := r["op"].(string)
			if ended[op] {
				t.Fatalf("record after op %s ended: %v", op, r)
			}
			switch r["record"] {
			case attemptlog.KindAttempt:
				attempts++
				next[op]++
				if r["attempt"] != float64(next[op]) {
					t.Errorf("op %s: attempt %v, want %d", op, r["attempt"], next[op])
				}
				sent, _ := time.Parse(time.RFC3339Nano, r["sent"].(string))
				answered, _ := time.Parse(time.RFC3339Nano, r["answered"].(string))
				if sent.Before(last[op]) || answered.Before(sent) || sent.Before(simlog.Origin) {
					t.Errorf("op %s: times out of order: %v", op, r)
				}
				last[op] = answered
			case attemptlog.KindOperation:
				ended[op] = true
				if r["attempts"] != float64(next[op]) {
					t.Errorf("op %s: %v attempts, %d records", op, r["attempts"], next[op])
				}
				if r["outcome"] == "success" {
					completed++
				} else {
					gaveUp++
					byReason[r["reason"].(string)]++
				}
			}
		}
		if attempts != res.Attempts || completed != res.Completed || gaveUp != res.GaveUp || len(ended) != completed+gaveUp {
			t.Errorf("policy %d: log has %d attempts, %d completed, %d gave up; result %d, %d, %d",
				i, attempts, completed, gaveUp, res.Attempts, res.Completed, res.GaveUp)
		}
		for reason, n := range byReason {
			found := false
			for k, m := range res.GaveUpBy {
				if policies.StopReason(k).String() == reason {
					found = m == n
				}
			}
			if !found {
				t.Errorf("give-ups for %s: log %d, result %v", reason, n, res.GaveUpBy)
			}
		}
	}
}

func TestRefusesLayersAndHedges(t *testing.T) {
	cfg := sim.Config{Policy: sim.Policy{Name: "layered", Layers: []sim.Layer{{}}}}
	if _, err := simlog.Attach(&cfg, "layered", attemptlog.NewHandler(&bytes.Buffer{})); !errors.Is(err, simlog.ErrUnsupported) {
		t.Errorf("layers: %v", err)
	}
}
