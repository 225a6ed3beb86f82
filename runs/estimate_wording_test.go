package runs

import (
	"strings"
	"testing"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// The estimate's events are a bound except where a policy has a header
// pacer (docs/scale.md): every message that prints them says "up to" and
// "at most" for a bound, "about" and "estimate" otherwise.
func TestEstimateWordingBoundOrNot(t *testing.T) {
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	plain, err := f.Lookup("overload-burst")
	if err != nil {
		t.Fatal(err)
	}
	paced, err := f.Lookup("shared-key-tokens")
	if err != nil {
		t.Fatal(err)
	}
	if !kinds.EventsUnbounded(pacerPolicy(t, paced)) {
		t.Fatalf("shared-key-tokens has a header pacer, but kinds.EventsUnbounded says no")
	}
	for _, tt := range []struct {
		s         *scenarios.Scenario
		bound     bool
		say, deny []string
	}{
		{plain, true, []string{"up to ", "at most ~", "(from the bound)"}, []string{"about", "estimate"}},
		{paced, false, []string{"about ", "an estimate, not a bound", "header pacer", "(from the estimate)"}, []string{"up to", "at most", "from the bound"}},
	} {
		est := EstimateOf(tt.s, 3)
		if (est.NotBound == "") != tt.bound {
			t.Errorf("%s: NotBound = %q", tt.s.Name, est.NotBound)
		}
		// Every way the estimate reaches a message: String, Refusal over
		// the limit, and the sums of Plan.Work and ShardWork.
		huge := est
		huge.Events = 2 * RefuseEvents
		plan := Plan{Groups: []Group{{Scenario: tt.s, First: 1, Seeds: 2, Plot: true}}}
		shard, _, _ := plan.ShardWork(Shard{Index: 0, Count: 1})
		msgs := []string{est.String(), plan.Work().String(), shard.String(), Estimate{}.Add(est).String()}
		for _, msg := range msgs {
			for _, w := range tt.say {
				if !strings.Contains(msg, w) {
					t.Errorf("%s: %q does not say %q", tt.s.Name, msg, w)
				}
			}
			// Memory stays a bound: "up to N of memory".
			events, _, _ := strings.Cut(msg, ", up to ")
			for _, w := range tt.deny {
				if strings.Contains(events, w) {
					t.Errorf("%s: %q says %q", tt.s.Name, msg, w)
				}
			}
		}
		t.Logf("%s: %s", tt.s.Name, est)
		refusal := huge.Refusal()
		if want := map[bool]string{true: "up to ", false: "about "}[tt.bound]; !strings.HasPrefix(refusal, want) {
			t.Errorf("%s: refusal %q, want it to start %q", tt.s.Name, refusal, want)
		}
	}
}

// pacerPolicy returns the policy of s with a header pacer.
func pacerPolicy(t *testing.T, s *scenarios.Scenario) *sim.Policy {
	t.Helper()
	for i := range s.Policies {
		if strings.Contains(kinds.DescribeCoordination(&s.Policies[i]), "rate-limit pacer") {
			return &s.Policies[i]
		}
	}
	t.Fatalf("%s has no header pacer", s.Name)
	return nil
}
