package sim

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// Test-only access for sim_test: the random stream a client's policy draws
// from, and a server model driven by hand.

// ClientPolicyStream returns the PCG stream client i's policy draws from in
// a run with the given seed.
func ClientPolicyStream(seed uint64, i int) *rand.PCG {
	p := newStream(seed, streamPolicy, uint64(i))
	return &p
}

// NewServerModel returns the admission function of m as a run with the given
// seed builds it: calls must come in time order.
func NewServerModel(m *CapacityWindows, seed uint64) func(now time.Duration) (admitted bool, rej Rejection, respondAt time.Duration) {
	pcg := newStream(seed, streamServer, 0)
	srv := m.NewServer(rand.New(&pcg))
	return func(now time.Duration) (bool, Rejection, time.Duration) {
		r := srv.Arrive(now, Request{})
		o := r.Outcome
		return o.Class == policies.Success, Rejection{Status: o.Status, Class: o.Class, RetryAfter: o.ServerWait}, r.At
	}
}

// ClientStart returns client i's start time in a run with the given seed
// and workload spread.
func ClientStart(seed uint64, i int, spread time.Duration) time.Duration {
	pcg := newStream(seed, streamStart, uint64(i))
	return Burst{Clients: i + 1, Spread: spread}.Start(i, rand.New(&pcg))
}

// RunTraced runs cfg as Run does and calls trace with every event just
// before the run processes it: its time, its client and what it does
// ("ready": ask to start; "send": start after waiting for a booked slot;
// "decide": the server decides a pending request; "detached": it decides
// one whose client stopped waiting; "response"). Whatever
// the run reports while processing the event (Observer, Hooks) belongs to
// that client.
func RunTraced(cfg Config, trace func(at time.Duration, client int, kind string)) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	cfg = cfg.withLayers()
	var r runner
	r.trace = func(at time.Duration, i int32, kind eventKind) {
		name := map[eventKind]string{evReady: "ready", evResponse: "response", evDecide: "decide", evDetached: "detached", evHedge: "hedge"}[kind]
		if kind == evReady && r.ops[i].op.Resuming() {
			name = "send"
		}
		trace(at, int(i), name)
	}
	return r.run(context.Background(), &cfg)
}

// withMaxSeq returns cfg whose run lowers the event queue's largest
// sequence number to limit (0: not lowered), so that tests exercise
// renumbering.
func withMaxSeq(cfg Config, limit uint64) Config {
	cfg.maxSeq = limit
	return cfg
}

// lowerMaxSeq lowers the largest sequence number of q, a queue a test
// drives by hand, to limit (0: not lowered), after q.init.
func lowerMaxSeq(q *queue, limit uint64) {
	if limit > 0 {
		q.maxSeq = min(q.maxSeq, limit)
	}
}

// withoutLIFOForecast returns cfg with its queue server's adaptive-LIFO
// forecast turned off (a copy of the server; cfg's is unchanged).
func withoutLIFOForecast(cfg Config) Config {
	q := *cfg.Server.(*Queue)
	q.noForecast = true
	cfg.Server = &q
	return cfg
}

// countersOf is what report adds to no counters: the counters a model's
// typed stats report, for comparison with Result.Counters.
func countersOf(report func(*Counters)) Counters {
	var c Counters
	report(&c)
	return c
}

// counter is r's counter called name (0 when none).
func counter(r Result, name string) int64 {
	v, _ := r.Counters.Get(name)
	return v
}

// Digests returns resultDigest's digest of r (as TestResultDigests
// records it) and one of what that leaves out: its counters, the times
// its operations gave up and its time waited.
func Digests(r *Result) (result, rest string) {
	h := sha256.New()
	for _, c := range r.Counters {
		fmt.Fprintf(h, "%s=%d\n", c.Name, c.Value)
	}
	fmt.Fprintf(h, "%v|%v\n", r.GiveUps, r.Waited)
	return resultDigest(r), hex.EncodeToString(h.Sum(nil))[:16]
}

// RunEventDigest runs cfg as Run does and returns its result and a digest
// of its event sequence (tracedRun's).
func RunEventDigest(cfg Config) (Result, string, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, "", err
	}
	cfg = cfg.withLayers()
	var r runner
	h := sha256.New()
	var b [13]byte
	r.trace = func(at time.Duration, i int32, kind eventKind) {
		binary.LittleEndian.PutUint64(b[0:], uint64(at))
		binary.LittleEndian.PutUint32(b[8:], uint32(i))
		b[12] = byte(kind)
		h.Write(b[:])
	}
	res, err := r.run(context.Background(), &cfg)
	return res, hex.EncodeToString(h.Sum(nil))[:16], err
}
