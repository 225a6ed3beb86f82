package runs

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
)

// A timeline worked out by hand. Three clients start at 0; the server
// admits one request per 1-second window and answers after 400 ms,
// rejecting with 429 in the first second and 503 after; each client waits
// 300 ms after a rejection, 3 attempts at most. In 250 ms buckets:
//
//	0     3 first attempts: op 0 admitted, ops 1, 2 rejected (429)
//	0.4   3 answers; op 0 completes
//	0.7   2 retries, rejected (429: the window [0, 1 s) is spent)
//	1.1   2 answers
//	1.4   2 retries: op 1 admitted, op 2 rejected (503)
//	1.8   2 answers; op 1 completes, op 2 gives up (3 attempts)
func TestTimelineByHand(t *testing.T) {
	cfg := sim.Config{Seed: 1, Workload: sim.Burst{Clients: 3},
		Server: &sim.CapacityWindows{ResponseTime: sim.Fixed(400 * time.Millisecond), Phases: []sim.Phase{
			{Duration: time.Second, Admit: 1, Window: time.Second, Reject: sim.Rejection{Status: 429, Class: policies.RetryAfter}},
			{Admit: 1, Window: time.Second, Reject: sim.Rejection{Status: 503, Class: policies.Capacity}},
		}},
		Policy: sim.Policy{Name: "p", Rules: policies.Policy{Backoff: policies.Constant{Wait: 300 * time.Millisecond}, MaxAttempts: 3}}}
	tl, r, err := RecordTimeline(cfg, 250*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if r.Attempts != 7 || r.Completed != 2 || r.GaveUp != 1 {
		t.Fatalf("the run: %d attempts, %d completed, %d gave up; the hand count says 7, 2, 1", r.Attempts, r.Completed, r.GaveUp)
	}
	z := []int{0, 0, 0, 0, 0, 0, 0, 0}
	want := Timeline{Policy: "p", Bucket: 250 * time.Millisecond,
		//                 0  .25 .5 .75 1 1.25 1.5 1.75
		FirstAttempts: []int{3, 0, 0, 0, 0, 0, 0, 0},
		Retries:       []int{0, 0, 2, 0, 0, 2, 0, 0},
		Admitted:      []int{1, 0, 0, 0, 0, 1, 0, 0},
		Wasted:        z,
		Rejected:      []int{2, 0, 2, 0, 0, 1, 0, 0},
		RejectedBy: ClassCounts{
			RetryAfter: []int{2, 0, 2, 0, 0, 0, 0, 0},
			Capacity:   []int{0, 0, 0, 0, 0, 1, 0, 0},
			Transient:  z, Terminal: z},
		Completed:     []int{0, 1, 0, 0, 0, 0, 0, 1},
		GaveUp:        []int{0, 0, 0, 0, 0, 0, 0, 1},
		LocalRejected: LocalCounts{Budget: z, Throttled: z, CircuitOpen: z},
		InFlight:      []int{3, 0, 2, 2, 0, 2, 2, 0},
	}
	got, _ := json.Marshal(tl)
	exp, _ := json.Marshal(want)
	if string(got) != string(exp) {
		t.Errorf("timeline\n got %s\nwant %s", got, exp)
	}
	// Doubling the bucket adds counts up and keeps the later in-flight level.
	tl.coarsen()
	if tl.Bucket != 500*time.Millisecond || !slices.Equal(sumOf(tl.FirstAttempts, tl.Retries), []int{3, 2, 2, 0}) ||
		!slices.Equal(tl.Completed, []int{1, 0, 0, 1}) || !slices.Equal(tl.InFlight, []int{0, 2, 2, 0}) {
		t.Errorf("coarsened: bucket %v, first attempts + retries %v, completed %v, in flight %v", tl.Bucket, sumOf(tl.FirstAttempts, tl.Retries), tl.Completed, tl.InFlight)
	}
}

// A queue's timeline separates the work served in time from the work
// served after its client gave up (wasted): on metastable-retry-storm the
// immediate retries' queue admits three times its capacity per second,
// but what it serves in time stays near the capacity, and the wasted
// counts add up to the queue's own server.wasted.
func TestTimelineWasted(t *testing.T) {
	s := scenariotest.Builtin(t, "metastable-retry-storm")
	p := slices.IndexFunc(s.Policies, func(p sim.Policy) bool { return p.Name == "immediate" })
	tl, r, err := RecordTimeline(s.Config(p, s.Seed), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := r.Counters.Get("server.wasted")
	if got := total(tl.Wasted); int64(got) != want || got == 0 {
		t.Fatalf("timeline wastes %d attempts, server.wasted %d; want equal and > 0", got, want)
	}
	peak, inTime := 0, 0
	for i := range tl.Buckets() {
		if tl.Wasted[i] > tl.Admitted[i] {
			t.Fatalf("bucket %d: %d wasted of %d admitted", i, tl.Wasted[i], tl.Admitted[i])
		}
		peak = max(peak, tl.Admitted[i])
		inTime = max(inTime, tl.Admitted[i]-tl.Wasted[i])
	}
	// Capacity 100 a second; a bucket's in-time work may exceed it a little
	// (service times are exponential, the bucket is by arrival).
	if peak < 250 || inTime > 130 {
		t.Errorf("admitted peaks at %d a second, served in time at %d: want a storm (>= 250) served near the capacity of 100 (<= 130)", peak, inTime)
	}
}

func sumOf(a, b []int) []int {
	s := slices.Clone(a)
	for i := range b {
		s[i] += b[i]
	}
	return s
}

func total(s []int) int {
	n := 0
	for _, v := range s {
		n += v
	}
	return n
}

// checkTotals compares every series' total with the run's result.
func checkTotals(t *testing.T, tl *Timeline, r *sim.Result) {
	t.Helper()
	rb := &tl.RejectedBy
	lr := &tl.LocalRejected
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"first attempts", total(tl.FirstAttempts), r.Attempts - r.Retries},
		{"retries", total(tl.Retries), r.Retries},
		{"admitted", total(tl.Admitted), r.Admitted},
		{"rejected", total(tl.Rejected), r.Rejected},
		{"rejected by class", total(rb.RetryAfter) + total(rb.Capacity) + total(rb.Transient) + total(rb.Terminal), r.Rejected},
		{"completed", total(tl.Completed), r.Completed},
		{"gave up", total(tl.GaveUp), r.GaveUp},
		{"local: budget", total(lr.Budget), r.GaveUpBy[policies.StopBudget]},
		{"local: throttled", total(lr.Throttled), r.GaveUpBy[policies.StopThrottled]},
		{"local: circuit open", total(lr.CircuitOpen), r.GaveUpBy[policies.StopCircuitOpen]},
		{"in flight at the end", tl.InFlight[len(tl.InFlight)-1], 0},
	} {
		if c.got != c.want {
			t.Errorf("%s: %s: timeline %d, run %d", tl.Policy, c.name, c.got, c.want)
		}
	}
}

// The retry controls' local rejections land in the local-rejections series,
// by reason, in the buckets of the give-ups: controls-outage has a retry
// quota (aws-standard, grpc-throttled: budget), adaptive throttling (sre:
// throttled) and a breaker (circuit_open). Give-ups of other reasons
// (anthropic-sdk: attempts) do not.
func TestTimelineLocalRejections(t *testing.T) {
	s := scenariotest.Builtin(t, "controls-outage")
	bucket := time.Second
	wantSome := map[string]func(l *LocalCounts) []int{
		"aws-standard": func(l *LocalCounts) []int { return l.Budget },
		"sre":          func(l *LocalCounts) []int { return l.Throttled },
		"breaker":      func(l *LocalCounts) []int { return l.CircuitOpen },
	}
	for p := range s.Policies {
		cfg := s.Config(p, s.Seed)
		var byReason [machine.NumStopReasons][]int
		at := func(d time.Duration) int { return int(d / bucket) }
		cfg.Observer.OnGiveUp = func(d time.Duration, _ int, reason policies.StopReason) {
			for len(byReason[reason]) <= at(d) {
				byReason[reason] = append(byReason[reason], 0)
			}
			byReason[reason][at(d)]++
		}
		ref, err := sim.Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		tl, r, err := RecordTimeline(s.Config(p, s.Seed), bucket)
		if err != nil {
			t.Fatal(err)
		}
		if tl.Bucket != bucket {
			t.Fatalf("bucket coarsened to %v", tl.Bucket)
		}
		checkTotals(t, &tl, &r)
		if r.GaveUpBy != ref.GaveUpBy {
			t.Fatalf("%s: observed run differs", tl.Policy)
		}
		pad := func(s []int) []int { return append(slices.Clone(s), make([]int, tl.Buckets()-len(s))...) }
		for _, c := range []struct {
			reason policies.StopReason
			series []int
		}{{policies.StopBudget, tl.LocalRejected.Budget}, {policies.StopThrottled, tl.LocalRejected.Throttled}, {policies.StopCircuitOpen, tl.LocalRejected.CircuitOpen}} {
			if !slices.Equal(c.series, pad(byReason[c.reason])) {
				t.Errorf("%s: %s per bucket %v, the give-ups say %v", tl.Policy, c.reason, c.series, pad(byReason[c.reason]))
			}
		}
		for i := range tl.Buckets() {
			if tl.LocalRejections(i) > tl.GaveUp[i] {
				t.Errorf("%s, bucket %d: %d local rejections, %d give-ups", tl.Policy, i, tl.LocalRejections(i), tl.GaveUp[i])
			}
		}
		if f, ok := wantSome[tl.Policy]; ok && total(f(&tl.LocalRejected)) == 0 {
			t.Errorf("%s: no local rejections recorded; controls-outage expects some", tl.Policy)
		}
		if tl.Policy == "anthropic-sdk" && total(tl.GaveUp) == 0 {
			t.Errorf("anthropic-sdk: no give-ups; controls-outage expects some")
		}
		if tl.Policy == "anthropic-sdk" && total(tl.LocalRejected.Budget)+total(tl.LocalRejected.Throttled)+total(tl.LocalRejected.CircuitOpen) != 0 {
			t.Errorf("anthropic-sdk has no retry controls, but local rejections were recorded")
		}
	}
}

// In flight at each bucket's end is the attempts sent before it less the
// answers received before it, counted by an observer of the same run.
func TestTimelineInFlight(t *testing.T) {
	busy := 0
	for _, name := range []string{"overload-burst", "controls-outage", "metastable-retry-storm"} {
		s := scenariotest.Builtin(t, name)
		for p := range s.Policies {
			cfg := s.Config(p, s.Seed)
			var sent, answered []time.Duration
			cfg.Observer.OnSend = func(at time.Duration, _ int, _ bool) { sent = append(sent, at) }
			cfg.Observer.OnResponse = func(at time.Duration, _ int, _ policies.Class) { answered = append(answered, at) }
			if _, err := sim.Run(cfg); err != nil {
				t.Fatal(err)
			}
			tl, r, err := RecordTimeline(s.Config(p, s.Seed), DefaultBucket(s.Server))
			if err != nil {
				t.Fatal(err)
			}
			checkTotals(t, &tl, &r)
			before := func(ts []time.Duration, end time.Duration) int {
				n, _ := slices.BinarySearch(ts, end) // times are in order
				return n
			}
			for i := range tl.Buckets() {
				end := time.Duration(i+1) * tl.Bucket
				if want := before(sent, end) - before(answered, end); tl.InFlight[i] != want {
					t.Fatalf("%s/%s, bucket %d: in flight %d, sent − answered %d", name, tl.Policy, i, tl.InFlight[i], want)
				}
				if tl.InFlight[i] > 0 {
					busy++
				}
			}
		}
	}
	if busy < 100 {
		t.Errorf("only %d buckets end with attempts in flight; the test checks too little", busy)
	}
}

// Coarsening, while recording or after, keeps every total, and in flight
// at a coarse bucket's end is the fine one's at the same time.
func TestTimelineCoarseningKeepsTotals(t *testing.T) {
	s := scenariotest.Builtin(t, "controls-outage")
	for p := range s.Policies {
		fine, r, err := RecordTimeline(s.Config(p, s.Seed), 10*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if fine.Bucket == 10*time.Millisecond {
			t.Fatalf("%s: a run of %v in 10ms buckets did not coarsen while recording", fine.Policy, r.LastCompletion)
		}
		checkTotals(t, &fine, &r)
		coarse := fine.clone()
		for range 3 {
			coarse.coarsen()
		}
		checkTotals(t, &coarse, &r)
		if err := coarse.check(10 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		for i := range coarse.Buckets() {
			j := min((i+1)*8, fine.Buckets()) - 1
			if coarse.InFlight[i] != fine.InFlight[j] {
				t.Fatalf("%s: in flight at the end of coarse bucket %d: %d; fine bucket %d: %d", fine.Policy, i, coarse.InFlight[i], j, fine.InFlight[j])
			}
		}
		// The fine timeline is untouched by the clone's coarsening.
		checkTotals(t, &fine, &r)
	}
}

// A timeline read from a shard file must have every series the same length.
func TestTimelineCheck(t *testing.T) {
	tl, _, err := RecordTimeline(scenariotest.Builtin(t, "overload-burst").Config(0, 1), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.check(time.Second); err != nil {
		t.Fatal(err)
	}
	for _, asked := range []time.Duration{0, -time.Second, 3 * time.Second} {
		if err := tl.check(asked); err == nil {
			t.Errorf("a timeline of 1s buckets passed as one of %v", asked)
		}
	}
	tl.RejectedBy.Terminal = tl.RejectedBy.Terminal[:1]
	if err := tl.check(time.Second); err == nil {
		t.Error("a short series passed the check")
	}
}
