package scenarios

import (
	"reflect"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/kinds"
)

// shared_throttle=1 gives every policy without a throttle a copy of the
// first one, as the same throttle written in the file would; 0 takes every
// throttle away, as deleting them from the file would. The original keeps
// its own.
func TestSharedThrottleParam(t *testing.T) {
	const file = `scenarios:
  - name: x
    server: {phases: [{admit: 5, window: 1s}]}
    clients: {count: 10, max_attempts: 3}
    policies:
      - name: a
        type: capped-exponential
      - name: b
        type: full-jitter
        gate: true
        throttle: {rate: 4, per: 2s, max_queue: 3}
      - name: c
        type: full-jitter
        throttle: {rate: 9}
`
	p, ok := kinds.LookupParam("shared_throttle")
	if !ok {
		t.Fatal("no parameter shared_throttle")
	}
	if p.Field != "" {
		t.Errorf("shared_throttle names a policy field %q; it adds and removes a coordinator", p.Field)
	}
	parse := func(text string) *Scenario {
		t.Helper()
		f, err := Parse("x.yaml", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return f.Scenarios[0]
	}
	s := parse(file)
	for v, text := range map[int64]string{
		1: strings.Replace(file, "type: capped-exponential", "type: capped-exponential\n        throttle: {rate: 4, per: 2s, max_queue: 3}", 1),
		0: strings.NewReplacer("        throttle: {rate: 4, per: 2s, max_queue: 3}\n", "", "        throttle: {rate: 9}\n", "").Replace(file),
	} {
		c := s.Clone()
		if err := c.Set(p, v); err != nil {
			t.Fatalf("shared_throttle=%d: %v", v, err)
		}
		want := parse(text)
		for i := range c.Policies {
			if len(c.Policies[i].Coordinators) == 0 {
				c.Policies[i].Coordinators = nil
			}
		}
		if !reflect.DeepEqual(c.Policies, want.Policies) {
			t.Errorf("shared_throttle=%d gives\n%+v\nwant\n%+v", v, c.Policies, want.Policies)
		}
	}
	if !reflect.DeepEqual(s.Policies, parse(file).Policies) {
		t.Errorf("the original changed: %+v", s.Policies)
	}
	none := parse(strings.NewReplacer("        throttle: {rate: 4, per: 2s, max_queue: 3}\n", "", "        throttle: {rate: 9}\n", "").Replace(file))
	for _, v := range []int64{0, 1} {
		if err := none.Clone().Set(p, v); err == nil || err.Error() != "no policy of this scenario has a throttle to share" {
			t.Errorf("shared_throttle=%d without a throttle: %v", v, err)
		}
	}
	if err := s.Clone().Set(p, 2); err == nil || err.Error() != "must be between 0 and 1" {
		t.Errorf("shared_throttle=2: %v", err)
	}
}
