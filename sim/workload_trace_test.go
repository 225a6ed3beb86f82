package sim

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
)

func TestArrivalsFromCSV(t *testing.T) {
	w, err := ArrivalsFromCSV(strings.NewReader("start,count\n0,2\n# quiet\n1.5,0\n2s,3\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{0, 0, 2 * time.Second, 2 * time.Second, 2 * time.Second}
	if len(w.Starts) != len(want) || w.Validate() != nil {
		t.Fatalf("starts %v, want %v", w.Starts, want)
	}
	for i := range want {
		if w.Starts[i] != want[i] || w.Start(i, nil) != want[i] {
			t.Errorf("start %d = %v, want %v", i, w.Starts[i], want[i])
		}
	}
	for in, msg := range map[string]string{"1,2\n": "line 1: the first row must start at 0", "0,1\n0.5,-1\n": "line 2: count", "0,x\n": "line 1"} {
		if _, err := ArrivalsFromCSV(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want %q", in, err, msg)
		}
	}
	if err := (&ArrivalTrace{}).Validate(); err == nil {
		t.Error("an empty trace validated")
	}
}

// A session trace: each session's calls start in order, the first at its
// start, each later one its gap after the call before it ended, whatever
// that call's outcome. Against a server that rejects everything in its
// first second and admits all after, with one attempt a call and 100 ms
// responses: session 0 (start 0, gaps 1s and 0.5s) calls at 0 (fails,
// ends at 0.1), 1.1 (completes at 1.2) and 1.7 (completes): completed,
// one call resumed after failing; session 1 (start 0.5, one call) fails.
func TestSessionTrace(t *testing.T) {
	w, err := SessionsFromCSV(strings.NewReader("\ufeffstart,gaps\n0s,1s 500ms\n# one call\n0.5,\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Validate(); err != nil || w.Operations() != 4 || len(w.Sessions) != 2 || w.Start(1, nil) != 500*time.Millisecond {
		t.Fatalf("sessions %+v (%v)", w.Sessions, err)
	}
	var sends []time.Duration
	res, err := Run(Config{Seed: 1, Workload: w,
		Server: &CapacityWindows{ResponseTime: Fixed(100 * time.Millisecond), Phases: []Phase{
			{Duration: time.Second, Reject: Rejection{Status: 529, Class: policies.Capacity}},
			{Admit: 100, Window: time.Second, Reject: Rejection{Status: 529, Class: policies.Capacity}},
		}},
		Policy:   Policy{Name: "once", Rules: policies.Policy{Backoff: policies.Constant{}, MaxAttempts: 1}},
		Observer: Observer{OnSend: func(at time.Duration, _ int, _ bool) { sends = append(sends, at) }},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{0, 500 * time.Millisecond, 1100 * time.Millisecond, 1700 * time.Millisecond}; !slices.Equal(sends, want) {
		t.Errorf("calls sent at %v, want %v", sends, want)
	}
	for name, want := range map[string]int64{"sessions.started": 2, "sessions.completed": 1, "sessions.failed": 1, "sessions.resumed": 1} {
		if got, _ := res.Counters.Get(name); got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
	for in, msg := range map[string]string{"0,x\n": "line 1: gap", "0,1s,2\n": "line 1", "-1,\n": "line 1: start"} {
		if _, err := SessionsFromCSV(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want %q", in, err, msg)
		}
	}
}
