package kinds

import (
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
)

// Parameters of a policy's backoff cap and of its retry controls, which
// sweeps and 'retrysim tune' vary; registered after those of params.go.
var (
	paramCap = registerParam(&Param{Name: "cap", Field: "cap", Title: "backoff cap", Unit: Duration, Min: 1, Max: int64(MaxDuration),
		About: "cap of every backoff that has one (not below its base)", missing: "no policy of this scenario has a cap"})
	_ = registerParam(&Param{Name: "budget_percent", Field: "ratio_budget.percent", Title: "retry budget: percent of requests", Unit: Count, Min: 1, Max: 1<<31 - 1,
		About: "share of requests a ratio_budget lets retry, in percent", missing: "no policy of this scenario has a ratio_budget",
		setters: []func(*Parts, int64) (bool, error){forSpec(func(c policies.RatioBudgetConfig, v int64) policies.RatioBudgetConfig {
			c.Percent = int(v)
			return c
		})}})
	_ = registerParam(&Param{Name: "budget_min_per_second", Field: "ratio_budget.min_per_second", Title: "retry budget: reserve per second", Unit: Count, Min: 1, Max: 1<<31 - 1,
		About: "retries per second a ratio_budget allows whatever the requests", missing: "no policy of this scenario has a ratio_budget",
		setters: []func(*Parts, int64) (bool, error){forSpec(func(c policies.RatioBudgetConfig, v int64) policies.RatioBudgetConfig {
			c.MinPerSecond = int(v)
			return c
		})}})
	_ = registerParam(&Param{Name: "breaker_failures", Field: "breaker.consecutive_failures", Title: "breaker: consecutive failures", Unit: Count, Min: 1, Max: 1<<31 - 1,
		About: "failures in a row that open a breaker", missing: "no policy of this scenario has a breaker",
		setters: []func(*Parts, int64) (bool, error){forSpec(func(c policies.BreakerConfig, v int64) policies.BreakerConfig {
			c.ConsecutiveFailures = int(v)
			return c
		})}})
	_ = registerParam(&Param{Name: "breaker_open_for", Field: "breaker.open_for", Title: "breaker: open time", Unit: Duration, Min: 1, Max: int64(MaxDuration),
		About: "how long a breaker stays open the first time", missing: "no policy of this scenario has a breaker",
		setters: []func(*Parts, int64) (bool, error){forSpec(func(c policies.BreakerConfig, v int64) policies.BreakerConfig {
			c.OpenFor = time.Duration(v)
			return c
		})}})
)

// forSpec is a setter over the policies' coordinator specs of type S.
func forSpec[S machine.Spec](set func(c S, v int64) S) func(s *Parts, v int64) (bool, error) {
	return forPolicies(func(p *sim.Policy, v int64) bool {
		c, ok := specOf[S](p)
		if ok {
			setSpec(p, set(c, v))
		}
		return ok
	})
}
