package sim

import (
	"reflect"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// OnProgress is told the events processed every pollEvery events, and
// changes nothing in the run.
func TestOnProgress(t *testing.T) {
	cfg := Config{Seed: 1, Workload: Burst{Clients: 20_000},
		Server: &CapacityWindows{ResponseTime: Fixed(time.Millisecond),
			Phases: []Phase{{Admit: 1000, Window: time.Millisecond, Reject: Rejection{Status: 529, Class: policies.Capacity}}}},
		Policy: Policy{Name: "p", Rules: policies.Policy{Backoff: policies.Constant{Wait: time.Millisecond}, MaxAttempts: 4}}}
	plain, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var told []int
	cfg.OnProgress = func(events int) { told = append(told, events) }
	watched, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(plain, watched) {
		t.Fatal("OnProgress changed the result")
	}
	if len(told) != plain.Events/pollEvery || len(told) == 0 {
		t.Fatalf("told %d times of %d events, want %d", len(told), plain.Events, plain.Events/pollEvery)
	}
	for i, n := range told {
		if n != (i+1)*pollEvery {
			t.Fatalf("call %d told %d events, want %d", i, n, (i+1)*pollEvery)
		}
	}
}
