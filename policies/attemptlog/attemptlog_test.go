package attemptlog_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/internal/golden"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/attemptlog"
	"github.com/retrysim/retrysim/policies/internal/scripted"
	"github.com/retrysim/retrysim/policies/observe"
)

// seeded is a fixed random source, so that the backoffs are the same on
// every run.
func seeded() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

// scriptCase is one scripted fault sequence and the options of its Do.
type scriptCase struct {
	name    string
	replies []scripted.Reply
	opts    []policies.Option
	cancel  time.Duration // if > 0, the caller cancels after this long
	latency time.Duration // 0: scripted's default
}

var scriptCases = []scriptCase{
	{name: "capacity_then_ok", replies: []scripted.Reply{{Status: 529}, {Status: 529}, {Status: 200}},
		opts: []policies.Option{policies.WithMaxAttempts(5)}},
	{name: "retry_after_then_ok", replies: []scripted.Reply{{Status: 429, RetryAfter: 2}, {Status: 200}},
		opts: []policies.Option{policies.WithMaxAttempts(5)}},
	{name: "always_503", replies: []scripted.Reply{{Status: 503}},
		opts: []policies.Option{policies.WithMaxAttempts(3)}},
	{name: "terminal_400", replies: []scripted.Reply{{Status: 400}}},
	{name: "reset_then_ok", replies: []scripted.Reply{{Err: fmt.Errorf("read tcp: %w", syscall.ECONNRESET)}, {Status: 200}}},
	{name: "fallback", replies: []scripted.Reply{{Status: 529}, {Status: 529}, {Status: 200}},
		opts: []policies.Option{policies.WithFallback(&policies.ModelFallback{Primary: "big", Fallback: "small", After: 2})}},
	{name: "cancelled_mid_attempt", replies: []scripted.Reply{{Status: 200}}, cancel: 500 * time.Millisecond, latency: time.Second},
	{name: "budget_before_retry_after", replies: []scripted.Reply{{Status: 429, RetryAfter: 30}},
		opts: []policies.Option{policies.WithBudget(10 * time.Second)}},
}

// runCase runs c's operation once through Do, logged by l, inside the
// caller's synctest bubble, and returns Do's error.
func runCase(t *testing.T, c scriptCase, l *attemptlog.Log) error {
	t.Helper()
	api := scripted.New(c.replies...)
	api.InputTokens, api.OutputTokens = 1200, 80
	if c.latency > 0 {
		api.Latency = c.latency
	}
	ctx := t.Context()
	if c.cancel > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		time.AfterFunc(c.cancel, cancel)
	}
	return l.Do(ctx, api.Op, append([]policies.Option{policies.WithRand(seeded())}, c.opts...)...)
}

func TestAttemptLogGolden(t *testing.T) {
	for _, c := range scriptCases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			synctest.Test(t, func(t *testing.T) {
				runCase(t, c, attemptlog.New(&buf))
			})
			checkLines(t, buf.Bytes())
			golden.Check(t, c.name, buf.Bytes())
		})
	}
}

// checkLines checks what every record of the format promises: one JSON
// object a line, the schema, a known kind, an op id.
func checkLines(t *testing.T, log []byte) []map[string]any {
	t.Helper()
	var recs []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(log))
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if rec["schema"] != attemptlog.Schema {
			t.Errorf("line %q: schema %v", sc.Text(), rec["schema"])
		}
		if k := rec["record"]; k != attemptlog.KindAttempt && k != attemptlog.KindOperation {
			t.Errorf("line %q: record %v", sc.Text(), k)
		}
		if id, _ := rec["op"].(string); id == "" {
			t.Errorf("line %q: no op", sc.Text())
		}
		recs = append(recs, rec)
	}
	if len(recs) == 0 {
		t.Fatal("no records")
	}
	if last := recs[len(recs)-1]; last["record"] != attemptlog.KindOperation {
		t.Errorf("last record %v, want the operation's", last)
	}
	return recs
}

// TestAttemptLogFields checks the golden files' meaning, so that an -update
// cannot accept a wrong log unseen.
func TestAttemptLogFields(t *testing.T) {
	run := func(c scriptCase) ([]map[string]any, error) {
		var buf bytes.Buffer
		var err error
		synctest.Test(t, func(t *testing.T) { err = runCase(t, c, attemptlog.New(&buf)) })
		return checkLines(t, buf.Bytes()), err
	}
	byName := map[string]scriptCase{}
	for _, c := range scriptCases {
		byName[c.name] = c
	}

	recs, err := run(byName["capacity_then_ok"])
	if err != nil || len(recs) != 4 {
		t.Fatalf("capacity_then_ok: err %v, %d records", err, len(recs))
	}
	for i, want := range []string{"capacity", "capacity", "success"} {
		if recs[i]["class"] != want || recs[i]["attempt"] != float64(i+1) {
			t.Errorf("record %d: %v, want attempt %d class %s", i, recs[i], i+1, want)
		}
	}
	if recs[0]["status"] != float64(529) || recs[0]["backoff_ms"] == nil || recs[2]["backoff_ms"] != nil {
		t.Errorf("statuses and backoffs: %v", recs)
	}
	if recs[2]["input_tokens"] != float64(1200) || recs[2]["output_tokens"] != float64(80) {
		t.Errorf("tokens of the success: %v", recs[2])
	}
	if recs[3]["outcome"] != "success" || recs[3]["attempts"] != float64(3) || recs[3]["reason"] != nil {
		t.Errorf("operation record %v", recs[3])
	}
	sent, _ := time.Parse(time.RFC3339Nano, recs[0]["sent"].(string))
	answered, _ := time.Parse(time.RFC3339Nano, recs[0]["answered"].(string))
	if answered.Sub(sent) != 100*time.Millisecond {
		t.Errorf("attempt took %v, want the fake's 100ms", answered.Sub(sent))
	}

	recs, _ = run(byName["retry_after_then_ok"])
	if recs[0]["class"] != "retry-after" || recs[0]["server_wait_ms"] != float64(2000) || recs[0]["backoff_ms"] != float64(2000) {
		t.Errorf("retry-after: %v", recs[0])
	}

	recs, err = run(byName["always_503"])
	var pe *policies.Error
	if !errors.As(err, &pe) || pe.Reason != policies.StopAttempts || len(recs) != 4 {
		t.Fatalf("always_503: %v, %d records", err, len(recs))
	}
	if recs[2]["class"] != "capacity" || recs[2]["backoff_ms"] != nil || recs[3]["reason"] != "attempts" || recs[3]["outcome"] != "gave_up" {
		t.Errorf("always_503: %v %v", recs[2], recs[3])
	}

	recs, _ = run(byName["fallback"])
	if recs[0]["model"] != "big" || recs[1]["fallback_to"] != "small" || recs[2]["model"] != "small" {
		t.Errorf("fallback: %v", recs)
	}

	recs, _ = run(byName["cancelled_mid_attempt"])
	if _, ok := recs[0]["class"]; ok || recs[0]["error"] != "context canceled" || recs[1]["reason"] != "cancelled" {
		t.Errorf("cancelled: %v", recs)
	}

	recs, _ = run(byName["budget_before_retry_after"])
	if recs[1]["reason"] != "deadline" || recs[0]["backoff_ms"] != nil || recs[0]["server_wait_ms"] != float64(30000) {
		t.Errorf("budget: %v", recs)
	}
}

// TestAttemptLogConcurrent shares one Log across concurrent operations:
// every line is whole, ids are distinct, each operation's records are its
// own.
func TestAttemptLogConcurrent(t *testing.T) {
	var buf syncBuffer
	l := attemptlog.New(&buf)
	synctest.Test(t, func(t *testing.T) {
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				api := scripted.New(scripted.Reply{Status: 529}, scripted.Reply{Status: 200})
				_ = l.Do(t.Context(), api.Op, policies.WithRand(seeded()))
			})
		}
		wg.Wait()
	})
	recs := checkLines(t, buf.Bytes())
	perOp := map[string]int{}
	for _, r := range recs {
		perOp[r["op"].(string)]++
	}
	if len(perOp) != 20 || len(recs) != 60 {
		t.Fatalf("%d operations, %d records; want 20 and 60", len(perOp), len(recs))
	}
	for id, n := range perOp {
		if n != 3 {
			t.Errorf("op %s has %d records, want 3", id, n)
		}
	}
}

func TestMillis(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0", time.Second: "1000", 250 * time.Microsecond: "0.25", 812345678: "812.345678",
		-1500 * time.Microsecond: "-1.5", time.Nanosecond: "0.000001",
	} {
		if got := attemptlog.Millis(d); string(got) != want {
			t.Errorf("Millis(%v) = %s, want %s", d, got, want)
		}
	}
}

func TestErrorIsBounded(t *testing.T) {
	var buf bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		api := scripted.New(scripted.Reply{Err: errors.New(strings.Repeat("é", 400))})
		_ = attemptlog.New(&buf).Do(t.Context(), api.Op, policies.WithMaxAttempts(1))
	})
	recs := checkLines(t, buf.Bytes())
	msg := recs[0]["error"].(string)
	if len(msg) > attemptlog.MaxErrorLen || !strings.HasSuffix(msg, "...") || !strings.HasPrefix(msg, "éé") {
		t.Errorf("error field of %d bytes: %q", len(msg), msg)
	}
}

// TestTrackerKeepsHooks: a Tracker chains the caller's hooks.
func TestTrackerKeepsHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var retries, giveUps int
		l := attemptlog.New(&bytes.Buffer{})
		tr := observe.Start(t.Context(), l, "mine", nil)
		api := scripted.New(scripted.Reply{Status: 529})
		err := policies.Do(tr.Context(), tr.Wrap(api.Op), policies.WithMaxAttempts(2), policies.WithRand(seeded()),
			policies.WithHooks(tr.Hooks(policies.Hooks{
				OnRetryScheduled: func(policies.RetryEvent) { retries++ },
				OnGiveUp:         func(*policies.Error) { giveUps++ },
			})))
		tr.End(err)
		if retries != 1 || giveUps != 1 || tr.ID() != "mine" {
			t.Errorf("retries %d, give-ups %d, id %q", retries, giveUps, tr.ID())
		}
	})
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte { return s.b.Bytes() }
