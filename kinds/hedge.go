package kinds

import (
	"fmt"
	"time"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// Hedging (policies.HedgeConfig): copies of a slow attempt, with a budget.
func registerHedge() {
	registerControl("hedge", "hedging", "hedge: {delay, percentile, window, min_samples, max_hedges, budget_percent, budget_burst} sends copies of an attempt not answered after a delay; the first success wins",
		false,
		func(m *schema.Mapping) policies.HedgeConfig {
			return policies.HedgeConfig{
				Delay:         m.Duration("delay", 0),
				MaxHedges:     int(m.Integer("max_hedges", 0, 0, machine.MaxHedges)),
				BudgetPercent: m.Number("budget_percent", 0, 0, 100*machine.MaxHedges),
				BudgetBurst:   m.Number("budget_burst", 0, 0, 1e6),
				Percentile:    m.Number("percentile", 0, 0, 99.999),
				Window:        int(m.Integer("window", 0, 0, machine.MaxHedgeWindow)),
				MinSamples:    int(m.Integer("min_samples", 0, 0, machine.MaxHedgeWindow)),
			}
		},
		describeHedge)
	// Per attempt, against a share of attempts (its burst aside).
	setScale("hedge", scaleFree)
	hedges := func(p *sim.Policy) bool { _, ok := specOf[policies.HedgeConfig](p); return ok }
	registerParam(&Param{Name: "hedge_delay", Field: "hedge.delay", Title: "hedge: delay", Unit: Duration, Max: int64(MaxDuration),
		About: "wait before a hedge (the delay until a percentile is known)", missing: "no policy of this scenario hedges",
		setters: []func(*Parts, int64) (bool, error){forSpec(func(c policies.HedgeConfig, v int64) policies.HedgeConfig {
			c.Delay = time.Duration(v)
			return c
		})}})
	registerParam(&Param{Name: "hedge_budget_percent", Field: "hedge.budget_percent", Title: "hedge: budget percent of attempts", Unit: Count, Min: 1, Max: 100 * machine.MaxHedges,
		About: "share of attempts a hedge budget lets hedge, in percent", missing: "no policy of this scenario hedges",
		setters: []func(*Parts, int64) (bool, error){forSpec(func(c policies.HedgeConfig, v int64) policies.HedgeConfig {
			c.BudgetPercent = float64(v)
			return c
		})}})
	for _, m := range []*metrics.Metric{
		{Name: "hedge.sent", ShedReason: metrics.SpentWork, Quantity: "hedges sent", Unit: metrics.Count, Better: stats.LowerIsBetter},
		{Name: "hedge.denied", ShedReason: metrics.SpentWork, Quantity: "hedges the budget refused", Unit: metrics.Count, Better: stats.LowerIsBetter},
		{Name: "hedge.cancelled", ShedReason: metrics.SpentWork, Quantity: "copies cancelled (work wasted)", Unit: metrics.Count, Better: stats.LowerIsBetter},
	} {
		metrics.RegisterShown(m, metrics.CounterValue(m.Name, 1), hedges)
	}
}

func describeHedge(c policies.HedgeConfig) string {
	c = c.WithDefaults()
	when := fmt.Sprintf("after %v", c.Delay)
	switch {
	case c.Percentile > 0:
		when = fmt.Sprintf("after the p%g of the last %d successes (%v until %d are known)", c.Percentile, c.Window, c.Delay, c.MinSamples)
	case c.Delay == 0:
		when = "at once"
	}
	budget := "no budget"
	if c.BudgetPercent > 0 {
		budget = fmt.Sprintf("a budget of %g%% of attempts (burst %g)", c.BudgetPercent, c.BudgetBurst)
	}
	return fmt.Sprintf("hedging: up to %d copies %s, %s", c.MaxHedges, when, budget)
}
