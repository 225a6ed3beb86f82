// Package sweep reads the parameters a sweep varies (--param
// NAME=FROM:TO:STEP) and sets them on copies of a loaded
// scenarios.Scenario; the scenario file and its schema stay as they are.
// The parameters are those of the scenario kinds (scenarios.Params); the
// runs package runs the points.
package sweep

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/retrysim/retrysim/scenarios"
)

// Limits that keep a typo from starting a run of days.
const (
	MaxParams = 2
	MaxValues = 1000   // per parameter
	MaxPoints = 10_000 // over all parameters
)

// nameList names the parameters there are, for messages.
func nameList() string {
	var names []string
	for _, p := range scenarios.Params() {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// Param is one parsed --param: a name and the values it takes.
type Param struct {
	Name   string
	info   *scenarios.Param
	Values []int64 // counts, or durations in nanoseconds
}

// Title describes the parameter on a plot's axis.
func (p *Param) Title() string { return p.info.Title }

// Unit is "" for counts and "ms" for durations (as JSON and CSV report them).
func (p *Param) Unit() string {
	if p.info.Unit == scenarios.Duration {
		return "ms"
	}
	return ""
}

// Label formats value i as the user would write it.
func (p *Param) Label(i int) string {
	if p.info.Unit == scenarios.Duration {
		return time.Duration(p.Values[i]).String()
	}
	return strconv.FormatInt(p.Values[i], 10)
}

// Number returns value i as a number: a count, or milliseconds.
func (p *Param) Number(i int) float64 {
	if p.info.Unit == scenarios.Duration {
		return float64(p.Values[i]) / float64(time.Millisecond)
	}
	return float64(p.Values[i])
}

// Parse reads NAME=FROM:TO:STEP (or NAME=VALUE). Durations take a unit
// (100ms, 2s); counts are integers. Values run from FROM to TO inclusive.
func Parse(spec string) (Param, error) {
	name, rng, ok := strings.Cut(spec, "=")
	if !ok || name == "" || rng == "" {
		return Param{}, fmt.Errorf("%q: want NAME=FROM:TO:STEP, e.g. clients=10:50:10", spec)
	}
	info, ok := scenarios.LookupParam(name)
	if !ok {
		return Param{}, fmt.Errorf("%q: unknown parameter %q; choose one of %s", spec, name, nameList())
	}
	parts := strings.Split(rng, ":")
	if len(parts) != 1 && len(parts) != 3 {
		return Param{}, fmt.Errorf("%q: want %s=FROM:TO:STEP or %s=VALUE", spec, name, name)
	}
	nums := make([]int64, len(parts))
	for i, s := range parts {
		v, err := parseValue(info.Unit, s)
		if err != nil {
			return Param{}, fmt.Errorf("%q: %v", spec, err)
		}
		nums[i] = v
	}
	if len(nums) == 1 {
		nums = []int64{nums[0], nums[0], 1}
	}
	from, to, step := nums[0], nums[1], nums[2]
	switch {
	case step <= 0:
		return Param{}, fmt.Errorf("%q: STEP must be > 0", spec)
	case to < from:
		return Param{}, fmt.Errorf("%q: TO must not be below FROM", spec)
	case from < info.Min:
		return Param{}, fmt.Errorf("%q: %s must be at least %s", spec, name, info.Format(info.Min))
	case (to-from)/step+1 > MaxValues:
		return Param{}, fmt.Errorf("%q: %d values; at most %d per parameter", spec, (to-from)/step+1, MaxValues)
	}
	p := Param{Name: name, info: info}
	for v := from; v <= to; v += step {
		p.Values = append(p.Values, v)
		if v > to-step { // the next step would pass TO (or overflow)
			break
		}
	}
	if last := p.Values[len(p.Values)-1]; last > info.Max {
		return Param{}, fmt.Errorf("%q: %s must be at most %s", spec, name, info.Format(info.Max))
	}
	return p, nil
}

func parseValue(u scenarios.ParamUnit, s string) (int64, error) {
	if u == scenarios.Duration {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (write e.g. 500ms, 2s)", s)
		}
		if d > scenarios.MaxDuration {
			return 0, fmt.Errorf("%q is longer than %v, the most a scenario allows", s, scenarios.MaxDuration)
		}
		return int64(d), nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	return v, nil
}

// Apply returns a copy of s with the parameters set to the given values
// (one per parameter); s itself is not changed.
func Apply(s *scenarios.Scenario, ps []Param, values []int64) (*scenarios.Scenario, error) {
	c := s.Clone()
	for i, p := range ps {
		if err := p.info.Set(c, values[i]); err != nil {
			return nil, fmt.Errorf("%s=%s: %w", p.Name, p.info.Format(values[i]), err)
		}
	}
	return c, nil
}
