package sim

import (
	"testing"
	"time"
)

// TestRecoveryRules feeds the recorder operations by hand; each want is
// worked out in the comment above it from the rules at RecoveryWindow.
func TestRecoveryRules(t *testing.T) {
	sixPerSecond := &CapacityWindows{Phases: []Phase{{Duration: 2 * sec, Window: sec}, {Admit: 6, Window: sec}}}
	type op struct {
		start, end time.Duration
		completed  bool
	}
	// n operations starting at 0, completing every gap from first.
	completing := func(n int, first, gap time.Duration) []op {
		ops := make([]op, n)
		for i := range ops {
			ops[i] = op{0, first + time.Duration(i)*gap, true}
		}
		return ops
	}
	shift := func(ops []op, by time.Duration) []op {
		for i := range ops {
			ops[i].start += by
			ops[i].end += by
		}
		return ops
	}
	for _, tt := range []struct {
		name      string
		incident  Incident
		ops       []op
		want      Recovery
		wantSteps time.Duration
	}{
		// 20 complete at 10/s from 2 s: [2 s, 12 s) has all 20 of a demand
		// of 20 (capacity 60 per window): recovered at once. During the
		// incident none; in [2 s, 4 s) all 20, 10/s.
		{"healthy", Incident{End: 2 * sec}, completing(20, 2*sec, 100*ms),
			Recovery{Measured: true, AfterPerSecond: 10, Recovered: true}, RecoveryStep},
		// All 20 give up at 5 s: every window from 2 s to 5 s has demand 20
		// and no goodput; later windows have no demand and prove nothing.
		{"never", Incident{End: 2 * sec}, func() []op {
			ops := make([]op, 20)
			for i := range ops {
				ops[i] = op{0, 5 * sec, false}
			}
			return ops
		}(), Recovery{Measured: true}, RecoveryStep},
		// As "never", then after a lull one more starts at 30 s and
		// completes at 30.1 s. Windows without demand (5.1 s to 20.1 s) are
		// skipped; the first holding the start and its completion is
		// [20.2 s, 30.2 s): recovered 18.2 s after the end.
		{"lull", Incident{End: 2 * sec}, func() []op {
			ops := make([]op, 20)
			for i := range ops {
				ops[i] = op{0, 5 * sec, false}
			}
			return append(ops, op{30 * sec, 30100 * ms, true})
		}(), Recovery{Measured: true, Recovered: true, TimeToRecover: 18200 * ms}, RecoveryStep},
		// 50 complete one a second from 2.5 s. A window at t has R in
		// progress and min(10, R) completions: it passes when min(10, R) >=
		// 0.9·R, first when R = 11, i.e. after the 39th completion (at
		// 40.5 s): t = 40.6 s, 38.6 s after the end. During [0, 2 s) none,
		// in [2 s, 4 s) those at 2.5 and 3.5 s: 1/s.
		{"slow drain", Incident{End: 2 * sec}, completing(50, 2500*ms, sec),
			Recovery{Measured: true, AfterPerSecond: 1, Recovered: true, TimeToRecover: 38600 * ms}, RecoveryStep},
		// 200 in progress, completing at the capacity, 6/s: 60 per window,
		// which is all the server can give: recovered at once. (The gap,
		// rounded down to the nanosecond, puts 13 in [2 s, 4 s).)
		{"at capacity", Incident{End: 2 * sec}, completing(200, 2*sec, sec/6),
			Recovery{Measured: true, AfterPerSecond: 6.5, Recovered: true}, RecoveryStep},
		// At 5/s: 50 of 60 fails until R <= 55 (50 >= 0.9·R): after the
		// 145th completion, at 2 s + 144/5 s = 30.8 s: t = 30.9 s.
		{"under capacity", Incident{End: 2 * sec}, completing(200, 2*sec, 200*ms),
			Recovery{Measured: true, AfterPerSecond: 5, Recovered: true, TimeToRecover: 28900 * ms}, RecoveryStep},
		// The slow drain 7000 s later: past 65,536 buckets of 100 ms the
		// step doubles to 200 ms; 40.6 s is still a bucket boundary.
		{"long run", Incident{Start: 7000 * sec, End: 7002 * sec}, shift(completing(50, 2500*ms, sec), 7000*sec),
			Recovery{Measured: true, AfterPerSecond: 1, Recovered: true, TimeToRecover: 38600 * ms}, 2 * RecoveryStep},
		// "at capacity" 300,000 s later: the step is 6.4 s, so a window is
		// one step, and the capacity it is held to is 6.4 s worth.
		{"at capacity, late", Incident{Start: 299998 * sec, End: 300000 * sec}, shift(completing(200, 2*sec, sec/6), 299998*sec),
			Recovery{Measured: true, AfterPerSecond: 6.5, Recovered: true}, 64 * RecoveryStep},
		// Goodput during: completions at 1 s and 1.5 s in [0, 2 s), 1/s.
		// Nothing is left after the incident: no window has demand, so
		// none shows a recovery.
		{"during", Incident{End: 2 * sec}, []op{{0, sec, true}, {0, 1500 * ms, true}},
			Recovery{Measured: true, DuringPerSecond: 1}, RecoveryStep},
	} {
		rec := newRecoveryRecorder(tt.incident, sixPerSecond)
		for _, o := range tt.ops {
			if o.completed {
				rec.complete(o.end)
			} else {
				rec.end(o.end)
			}
		}
		for _, o := range tt.ops {
			rec.start(o.start)
		}
		tt.want.Step = tt.wantSteps
		if got := rec.result(); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestRecoveryInRun checks the engine's wiring: a burst starts at 0, so its
// latencies are its completion times, and goodput during and after the
// incident can be counted from them.
func TestRecoveryInRun(t *testing.T) {
	cfg := reference(fullJitter)
	r := mustRun(t, cfg)
	if r.Recovery.Measured {
		t.Fatalf("recovery measured without an incident: %+v", r.Recovery)
	}
	cfg.Incident = Incident{End: 2 * sec}
	r = mustRun(t, cfg)
	during, after := 0, 0
	for _, l := range r.Latencies {
		switch {
		case l < 2*sec:
			during++
		case l < 4*sec:
			after++
		}
	}
	got := r.Recovery
	if !got.Measured || got.DuringPerSecond != float64(during)/2 || got.AfterPerSecond != float64(after)/2 {
		t.Errorf("recovery %+v; want during %v/s, after %v/s", got, float64(during)/2, float64(after)/2)
	}
	if after == 0 || !got.Recovered {
		t.Errorf("full jitter against the reference server: %d completions in [2 s, 4 s), recovery %+v", after, got)
	}
	cfg.Incident = Incident{Start: 3 * sec, End: 3 * sec}
	if _, err := Run(cfg); err == nil {
		t.Error("an empty incident ran")
	}
}
