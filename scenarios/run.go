package scenarios

import (
	"sync"

	"github.com/retrysim/retrysim/sim"
)

// Run simulates every policy of s on one seed, each in its own goroutine,
// and returns the results in the scenario's policy order.
func (s *Scenario) Run(seed uint64) ([]sim.Result, error) {
	results := make([]sim.Result, len(s.Policies))
	errs := make([]error, len(s.Policies))
	var wg sync.WaitGroup
	for i := range s.Policies {
		wg.Go(func() {
			results[i], errs[i] = sim.Run(s.Config(i, seed))
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return results, nil
}
