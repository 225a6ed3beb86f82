package sweep

import (
	"fmt"
	"strings"

	"github.com/retrysim/retrysim/scenarios"
)

// Validate checks every point of the grid ps spans over s, before any
// runs: each point's scenario must set (Apply) and pass the scenario
// loader's checks (scenarios.Scenario.Validate), so that a point is refused
// as the same scenario in a file would be. The error names the point's
// values and the field, e.g. "base=2h: policies[0].cap: must be at least
// base (2h0m0s), got 1m0s". Points are checked in grid order (the last
// parameter fastest), and the first problem is reported.
func Validate(s *scenarios.Scenario, ps []Param) error {
	idx := make([]int, len(ps))
	values := make([]int64, len(ps))
	for {
		for i, p := range ps {
			values[i] = p.Values[idx[i]]
		}
		c, err := Apply(s, ps, values)
		if err != nil {
			return err
		}
		if err := c.Validate(); err != nil {
			return fmt.Errorf("%s: %w", pointName(ps, values), err)
		}
		i := len(idx) - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < len(ps[i].Values) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return nil
		}
	}
}

// pointName writes a point as the user would: "base=2h response_time=0s".
func pointName(ps []Param, values []int64) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.Name + "=" + p.info.Format(values[i])
	}
	return strings.Join(parts, " ")
}
