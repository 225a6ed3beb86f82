package kinds

import (
	"slices"

	"github.com/retrysim/retrysim/policies/machine"
)

// registerSharedThrottle registers shared_throttle, the switch of the
// playground's "shared throttle on/off" (and a sweep over 0,1): 1 gives
// every policy without a throttle a copy of the first throttle in the
// file's order of policies (rate, per and max_queue; each policy's clients
// share their own), 0 takes every policy's throttle away. Policies keep
// their names and their other coordinators (a gated policy keeps its gate).
func registerSharedThrottle() {
	registerParam(&Param{Name: "shared_throttle", Title: "shared throttle (1 on for every policy, 0 off)", Unit: Count, Min: 0, Max: 1,
		About:   "1 gives every policy without a throttle a copy of the first one in the file, 0 removes every throttle",
		missing: "no policy of this scenario has a throttle to share",
		setters: []func(*Parts, int64) (bool, error){func(s *Parts, v int64) (bool, error) {
			var first *machine.ThrottleConfig
			for i := range s.Policies {
				if t, ok := specOf[machine.ThrottleConfig](&s.Policies[i]); ok {
					first = &t
					break
				}
			}
			if first == nil {
				return false, nil
			}
			for i := range s.Policies {
				p := &s.Policies[i]
				if v == 0 {
					p.Coordinators = slices.DeleteFunc(p.Coordinators, isSpec[machine.ThrottleConfig])
				} else if _, ok := specOf[machine.ThrottleConfig](p); !ok {
					setSpec(p, *first)
				}
			}
			return true, nil
		}}})
}
