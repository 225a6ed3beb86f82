package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// scripted is a Distribution that returns its values in order, for tests
// that choose every draw.
type scripted struct{ next *[]time.Duration }

func script(d ...time.Duration) scripted { return scripted{&d} }

func (s scripted) Sample(*rand.Rand) time.Duration {
	d := (*s.next)[0]
	*s.next = (*s.next)[1:]
	return d
}

// TestContentionRules drives a Contention server by hand: attempts arrive
// in order of their send time t with chosen delays d1…d4; pending writes
// are decided in order of arrival at the server w, ties in order of the
// attempts' arrival (as the engine does). Times in ms.
func TestContentionRules(t *testing.T) {
	type attempt struct {
		t, d1, d2, d3, d4 time.Duration
		giveUp            time.Duration // Request.GiveUpAt
	}
	const (
		commit   = "commit"
		conflict = "conflict"
		noWrite  = "no write"
	)
	for _, tt := range []struct {
		name     string
		attempts []attempt
		want     []string // per attempt
		stats    contentionStats
	}{
		// A commits at 3; B reads at 5, after it, and commits at 7.
		{"a commit before the read is seen", []attempt{{0, 1, 1, 1, 1, 0}, {0, 5, 1, 1, 1, 0}},
			[]string{commit, commit}, contentionStats{Reads: 2, Writes: 2}},
		// A commits at 3, inside B's (2, 8]: B conflicts.
		{"a commit between read and write conflicts", []attempt{{0, 1, 1, 1, 1, 0}, {0, 2, 5, 1, 1, 0}},
			[]string{commit, conflict}, contentionStats{Reads: 2, Writes: 2, Conflicts: 1}},
		// A commits at 3, exactly when B reads: B's read does not see it,
		// so B's write conflicts.
		{"a read does not see a commit at its instant", []attempt{{0, 1, 1, 1, 1, 0}, {0, 3, 1, 1, 1, 0}},
			[]string{commit, conflict}, contentionStats{Reads: 2, Writes: 2, Conflicts: 1}},
		// A and B read and write at 3 (no delay between): A commits first,
		// and B, whose read at 3 did not see it, conflicts.
		{"a tie with no delay between read and write", []attempt{{0, 3, 0, 0, 1, 0}, {1, 2, 0, 0, 1, 0}},
			[]string{commit, conflict}, contentionStats{Reads: 2, Writes: 2, Conflicts: 1}},
		// A and B both write at 3: the attempt that arrived first commits.
		{"a tie goes to the first arrival", []attempt{{0, 1, 1, 1, 1, 0}, {0, 0, 1, 2, 1, 0}},
			[]string{commit, conflict}, contentionStats{Reads: 2, Writes: 2, Conflicts: 1}},
		{"a tie goes to the first arrival, reversed", []attempt{{0, 0, 1, 2, 1, 0}, {0, 1, 1, 1, 1, 0}},
			[]string{commit, conflict}, contentionStats{Reads: 2, Writes: 2, Conflicts: 1}},
		// A commits at 3; B (read 2, write 4) conflicts; C reads at 4
		// and writes at 6: B's conflict is no commit, so C commits.
		{"a conflict is no commit", []attempt{{0, 1, 1, 1, 1, 0}, {0, 2, 1, 1, 1, 0}, {1, 3, 1, 1, 1, 0}},
			[]string{commit, conflict, commit}, contentionStats{Reads: 3, Writes: 3, Conflicts: 1}},
		// The client stops waiting at 1, before the read's answer at 2: no
		// write. At exactly 2 it still sends it.
		{"no write after the client stopped waiting", []attempt{{0, 1, 1, 1, 1, 1}, {0, 1, 1, 1, 1, 2}},
			[]string{noWrite, commit}, contentionStats{Reads: 2, Writes: 1}},
		// A's client stops waiting at 2.5, before its write reaches the
		// server at 3: the write is decided anyway, commits, and makes B
		// (read 2, write 5) conflict.
		{"a write after its client left still commits", []attempt{{0, 1, 1, 1, 1, 2500 * time.Microsecond}, {0, 2, 2, 1, 1, 0}},
			[]string{commit, conflict}, contentionStats{Reads: 2, Writes: 2, Conflicts: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var delays []time.Duration
			for _, a := range tt.attempts {
				delays = append(delays, a.d1*ms, a.d2*ms, a.d3*ms, a.d4*ms)
			}
			m := &Contention{Network: script(delays...)}
			if err := m.Validate(); err != nil {
				t.Fatal(err)
			}
			srv := m.NewServer(rand.New(rand.NewPCG(1, 1)))
			type write struct {
				i      int
				w      time.Duration
				ticket int32
			}
			var writes []write
			got := make([]string, len(tt.attempts))
			for i, a := range tt.attempts {
				resp := srv.Arrive(a.t*ms, Request{GiveUpAt: a.giveUp * ms})
				if a.giveUp > 0 && a.giveUp*ms < (a.t+a.d1+a.d2)*ms {
					if resp.Pending || resp.At != (a.t+a.d1+a.d2)*ms || resp.Outcome.Class == policies.Success {
						t.Fatalf("attempt %d: %+v, want a failure at the read's answer, %v", i, resp, (a.t+a.d1+a.d2)*ms)
					}
					got[i] = noWrite
					continue
				}
				if w := (a.t + a.d1 + a.d2 + a.d3) * ms; !resp.Pending || resp.At != w {
					t.Fatalf("attempt %d: %+v, want pending until %v", i, resp, w)
				}
				writes = append(writes, write{i, resp.At, resp.Ticket})
			}
			// Stable: ties stay in arrival order.
			slices.SortStableFunc(writes, func(a, b write) int { return int(a.w - b.w) })
			for _, w := range writes {
				resp := srv.(Decider).Decide(w.w, w.ticket)
				a := tt.attempts[w.i]
				if resp.Pending || resp.At != w.w+a.d4*ms {
					t.Fatalf("attempt %d: decided %+v, want the response at %v", w.i, resp, w.w+a.d4*ms)
				}
				switch resp.Outcome {
				case policies.Outcome{}:
					got[w.i] = commit
				case Conflict.Outcome():
					got[w.i] = conflict
				default:
					t.Fatalf("attempt %d: outcome %+v", w.i, resp.Outcome)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if st := srv.(*contentionState).stats; st != tt.stats {
				t.Errorf("stats %+v, want %+v", st, tt.stats)
			}
		})
	}
}

// Decided tickets are reused: the server's memory grows with the writes
// on their way at once, not with the writes of the run.
func TestContentionReusesTickets(t *testing.T) {
	srv := (&Contention{Network: Fixed(ms)}).NewServer(rand.New(rand.NewPCG(1, 1))).(*contentionState)
	for k := range 1000 {
		now := time.Duration(k) * 10 * ms
		a, b := srv.Arrive(now, Request{}), srv.Arrive(now, Request{})
		srv.Decide(a.At, a.Ticket)
		srv.Decide(b.At, b.Ticket)
	}
	if len(srv.pending) != 2 {
		t.Fatalf("%d pending slots after 2000 writes two at a time, want 2", len(srv.pending))
	}
	if st := srv.stats; st.Writes != 2000 || st.Conflicts != 1000 {
		t.Fatalf("stats %+v, want 2000 writes, 1000 conflicts (the second of each pair)", st)
	}
}

// contentionRun is n clients at t = 0 against one row, every message
// taking 10 ms, with policy p.
func contentionRun(n int, p Policy) Config {
	return Config{Seed: 1, Server: &Contention{Network: Fixed(10 * ms)}, Workload: Burst{Clients: n}, Policy: p}
}

// Three clients, every message 10 ms, a fixed 15 ms wait, worked by hand.
// An attempt sent at t reads at t+10, writes at t+30 and has its answer
// at t+40.
//
//	t = 0     all three send; read at 10, write at 30. Client 0's write
//	          is decided first (its attempt arrived first) and commits at
//	          30; 1 and 2 read at 10 < 30: conflicts.
//	t = 40    0 completes (40 ms). 1 and 2 get 409, wait 15 ms.
//	t = 55    1 and 2 send; read at 65 (after the commit at 30), write at
//	          85: 1 commits, 2 conflicts (the commit at 85 is in (65, 85]).
//	t = 95    1 completes (95 ms); 2 waits 15 ms.
//	t = 110   2 sends; read at 120, write at 140 commits; answer at 150.
//
// 6 attempts (3 retries), 3 admitted (commits), 3 rejected (conflicts),
// 6 reads and 6 writes; each attempt is 3 events (ready, decide,
// response).
func TestReferenceContention(t *testing.T) {
	r := mustRun(t, contentionRun(3, Policy{Name: "constant", Rules: policies.Policy{Backoff: policies.Constant{Wait: 15 * ms}, MaxAttempts: 10}}))
	want := Result{Policy: "constant", Clients: 3, Completed: 3, Attempts: 6, Retries: 3,
		Latencies: []time.Duration{40 * ms, 95 * ms, 150 * ms}, LastCompletion: 150 * ms,
		Admitted: 3, Rejected: 3, Events: 18, Counters: countersOf(contentionStats{Reads: 6, Writes: 6, Conflicts: 3}.report)}
	if !resultsEqual(r, want) {
		t.Fatalf("got  %+v\nwant %+v", r, want)
	}
}

// With an attempt timeout the server cannot see, a committed write's
// client may still time out and try again. One client, every message
// 10 ms, no wait, at most 2 attempts:
//
//   - timeout 15 ms: the read's answer (20 ms) comes after it, so no write
//     is sent; both attempts time out (at 15 and 30 ms): 2 reads, 0 writes,
//     each attempt decided (rejected) when it arrives, at 0 and 15 ms.
//   - timeout 25 ms: the write is sent at 20 ms, and the attempt times out
//     at 25 ms, before the write reaches the server (30 ms), which still
//     decides it then (it commits). The second attempt (read sent at 25)
//     times out at 50 ms, its write decided at 55 ms (it commits too).
//     The client sees 25 and 50, the server decides at 30 and 55.
//   - timeout 35 ms: the write reaches the server at 30 ms and commits, but
//     its answer (40 ms) is late: the attempt times out at 35 ms; the
//     second (read at 45, write at 65, commits) times out at 70 ms. Two
//     commits, no completion.
func TestContentionWithAttemptTimeout(t *testing.T) {
	for _, tt := range []struct {
		timeout            time.Duration
		admitted, rejected int
		reads, writes      int
		events             []time.Duration // responses and decisions, in order
	}{
		{15 * ms, 0, 2, 2, 0, []time.Duration{0, 15 * ms, 15 * ms, 30 * ms}},
		{25 * ms, 2, 0, 2, 2, []time.Duration{25 * ms, 30 * ms, 50 * ms, 55 * ms}},
		{35 * ms, 2, 0, 2, 2, []time.Duration{30 * ms, 35 * ms, 65 * ms, 70 * ms}},
	} {
		cfg := contentionRun(1, Policy{Name: "no-wait", Rules: policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 2, AttemptTimeout: tt.timeout}})
		var events []time.Duration
		cfg.Observer.OnDecision = func(at time.Duration, _ int, _ policies.Class) { events = append(events, at) }
		cfg.Observer.OnResponse = func(at time.Duration, _ int, _ policies.Class) { events = append(events, at) }
		r := mustRun(t, cfg)
		if !slices.Equal(events, tt.events) {
			t.Errorf("timeout %v: responses and decisions at %v, want %v", tt.timeout, events, tt.events)
		}
		if r.Completed != 0 || r.GaveUpBy[policies.StopAttempts] != 1 || r.Attempts != 2 || r.Admitted != tt.admitted || r.Rejected != tt.rejected ||
			!slices.Equal(r.Counters, countersOf(contentionStats{Reads: tt.reads, Writes: tt.writes}.report)) {
			t.Errorf("timeout %v: %+v", tt.timeout, r)
		}
	}
}

// With no network delay a retry reads at the instant of the commit it lost
// to, at its arrival, after that commit was made: it sees it and commits.
// Two clients, no wait: 0 commits at 0; 1 conflicts, retries at 0 and
// commits. (It conflicted on every attempt when a read never saw a commit
// of its own instant.)
func TestContentionWithoutDelay(t *testing.T) {
	r := mustRun(t, Config{Seed: 1, Server: &Contention{Network: Fixed(0)}, Workload: Burst{Clients: 2},
		Policy: Policy{Name: "now", Rules: policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 10}}})
	if r.Completed != 2 || r.Attempts != 3 || counter(r, "server.conflicts") != 1 {
		t.Errorf("completed %d, attempts %d, server %+v", r.Completed, r.Attempts, r.Counters)
	}
}

// resultsEqual compares every field of two Results.
func resultsEqual(a, b Result) bool {
	return a.Policy == b.Policy && a.Clients == b.Clients && a.Completed == b.Completed && a.Attempts == b.Attempts &&
		a.Retries == b.Retries && a.GaveUp == b.GaveUp && a.GaveUpBy == b.GaveUpBy && a.Fallbacks == b.Fallbacks &&
		slices.Equal(a.Latencies, b.Latencies) && a.LastCompletion == b.LastCompletion && a.Admitted == b.Admitted &&
		a.Rejected == b.Rejected && a.Events == b.Events && slices.Equal(a.Counters, b.Counters)
}

type startsAt []time.Duration

func (w startsAt) Validate() error                         { return nil }
func (w startsAt) Operations() int                         { return len(w) }
func (w startsAt) Start(i int, _ *rand.Rand) time.Duration { return w[i] }

// Two writes reach the server at 62 ms, one whose client still waits and
// one whose client's budget (60 ms) ended: the one whose attempt arrived
// first is decided first, whichever client still waits. Delays in ms:
//
//   - op 0 at 0: read at 1, write at 3: commits.
//   - op 1 at 0: read at 2, write at 4: conflict (the commit at 3), answer
//     at 5; its retry at 5 reads at 6, writes at 62, after its budget.
//   - op 2 at 3 reads at 4 and writes at 62: it arrived before op 1's retry,
//     so it is decided first and commits; op 1's conflicts. Started at 6
//     instead, it reads at 7 and writes at 62 after op 1's retry arrived:
//     op 1's (detached) write commits, op 2's conflicts, and op 2's retry
//     (read at 64) commits at 66, as its budget ends.
//
// With the sequence renumbered every 4 events the order is the same.
func TestContentionTieWithADetachedWrite(t *testing.T) {
	type decision struct {
		at    time.Duration
		op    int
		class policies.Class
	}
	for _, tt := range []struct {
		op2  time.Duration
		net  []time.Duration
		want []decision
	}{
		{3 * ms, []time.Duration{ms, ms, ms, ms, 2 * ms, ms, ms, ms, ms, ms, 57 * ms, ms, ms, ms, 55 * ms, ms},
			[]decision{{3 * ms, 0, policies.Success}, {4 * ms, 1, policies.Transient}, {62 * ms, 2, policies.Success}, {62 * ms, 1, policies.Transient}}},
		{6 * ms, []time.Duration{ms, ms, ms, ms, 2 * ms, ms, ms, ms, ms, ms, 55 * ms, ms, ms, ms, 54 * ms, ms, ms, ms, ms, ms},
			[]decision{{3 * ms, 0, policies.Success}, {4 * ms, 1, policies.Transient}, {62 * ms, 1, policies.Success}, {62 * ms, 2, policies.Transient}, {66 * ms, 2, policies.Success}}},
	} {
		for _, renumber := range []uint64{0, 4} {
			cfg := Config{Seed: 1, Server: &Contention{Network: script(tt.net...)}, Workload: startsAt{0, 0, tt.op2},
				Policy: Policy{Name: "p", Rules: policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 5, Deadline: 60 * ms}}}
			var got []decision
			cfg.Observer.OnDecision = func(at time.Duration, op int, c policies.Class) { got = append(got, decision{at, op, c}) }
			mustRun(t, withMaxSeq(cfg, renumber))
			if !slices.Equal(got, tt.want) {
				t.Errorf("op 2 at %v, renumbered every %d: decisions %v, want %v", tt.op2, renumber, got, tt.want)
			}
		}
	}
}
