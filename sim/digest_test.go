package sim

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/policies/machine"
)

// digestConfigs are the runs whose results and event sequences
// TestResultDigests pins: the reference scenario under each of its
// policies, a huge burst, a gated and throttled spread workload, and one
// with every control (gate, throttle, in-flight limit, fallback).
func digestConfigs() map[string]Config {
	controlled := hugeBurst(20_000)
	controlled.Policy.Coordinators = []machine.Spec{machine.GateConfig{}, machine.ThrottleConfig{Count: 2_000, Per: time.Second}, machine.LimitConfig{MaxInFlight: 1_000}}
	controlled.Policy.Fallback = &Fallback{After: 2}
	return map[string]Config{
		"reference/immediate":          reference(immediate),
		"reference/capped-exponential": reference(exponential),
		"reference/full-jitter":        reference(fullJitter),
		"reference/gated":              reference(gated),
		"hugeBurst(100000)":            hugeBurst(100_000),
		"gatedConfig(3000)":            gatedConfig(3000),
		"every-control(20000)":         controlled,
	}
}

// resultDigest hashes every field of r.
func resultDigest(r *Result) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s|%d|%d|%d|%d|%d|%v|%d|%d|%d|%d|%d|%d\n", r.Policy, r.Clients, r.Completed,
		r.Attempts, r.Retries, r.GaveUp, r.GaveUpBy, r.Fallbacks, r.LastCompletion,
		r.Admitted, r.Rejected, r.Events, len(r.Latencies))
	var b [8]byte
	for _, l := range r.Latencies {
		binary.LittleEndian.PutUint64(b[:], uint64(l))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// tracedRun runs cfg and also hashes its event sequence: every event's
// time, operation and kind, in the order the engine processed them.
func tracedRun(t *testing.T, cfg Config) (Result, string) {
	t.Helper()
	res, events, err := RunEventDigest(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res, events
}

// TestResultDigests pins the engine's output: for each config, a digest of
// every field of the Result (latencies included) and a digest of the
// sequence of events it processed. They were recorded before the engine's
// performance work; an optimisation must keep them all. If a deliberate
// change of behaviour changes them, record the new values with
// -run TestResultDigests -v and say why in the commit.
func TestResultDigests(t *testing.T) {
	want := map[string][2]string{
		// name: {result digest, event digest}
		"reference/immediate":          {"3e6231771c9bd0d4", "d2a3f7042d625c32"}, // 320 events
		"reference/capped-exponential": {"bc5b5960f8ea7be0", "60159d107e93e461"}, // 204 events
		"reference/full-jitter":        {"ba77aba6e9733b7e", "fa773139240c1f07"}, // 190 events
		"reference/gated":              {"559ea47c70f402a7", "2a8e730e28a80e6e"}, // 95 events
		"hugeBurst(100000)":            {"84c574867bc3dfd6", "2cc056e8452e1ddc"}, // 1393464 events
		"gatedConfig(3000)":            {"814a7f355f667321", "01f0114e870dabec"}, // 4239 events
		"every-control(20000)":         {"4975de5c0b75155b", "e1a9cdef8538cd74"}, // 119999 events
	}
	for name, cfg := range digestConfigs() {
		if (testing.Short() || racetest.Enabled) && cfg.Workload.Operations() > 10_000 {
			continue // one goroutine: the plain run checks the big ones
		}
		res, events := tracedRun(t, cfg)
		got := [2]string{resultDigest(&res), events}
		// The untraced run must give the same Result.
		plain, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if d := resultDigest(&plain); d != got[0] {
			t.Errorf("%s: traced run gives result %s, untraced %s", name, got[0], d)
		}
		t.Logf("%q: {%q, %q}, // %d events", name, got[0], got[1], res.Events)
		if w, ok := want[name]; !ok {
			t.Errorf("%s: no recorded digest", name)
		} else if got != w {
			t.Errorf("%s: digests {result %s, events %s}, want {%s, %s}: the engine's output changed", name, got[0], got[1], w[0], w[1])
		}
	}
}
