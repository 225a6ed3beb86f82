// Package sweep reads the parameters a sweep varies (--param
// NAME=FROM:TO:STEP, a log scale or a list) and sets them on copies of a loaded
// scenarios.Scenario; the scenario file and its schema stay as they are.
// The parameters are those of the scenario kinds (kinds.Params); the
// runs package runs the points.
package sweep

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/retrysim/retrysim/internal/suggest"
	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/scenarios"
)

// Limits that keep a typo from starting a run of days.
const (
	MaxParams = 2
	MaxValues = 1000   // per parameter
	MaxPoints = 10_000 // over all parameters
)

// nameList names the parameters there are, for messages.
func nameList() string { return strings.Join(paramNames(), ", ") }

func paramNames() []string {
	var names []string
	for _, p := range kinds.Params() {
		names = append(names, p.Name)
	}
	return names
}

// isPath reports whether name is the path of a field (server.type,
// policies[0].cap) rather than the short name of a parameter.
func isPath(name string) bool { return strings.ContainsAny(name, ".[") }

// pathParam is the parameter of the field at path: its values are
// durations when they have units, whole numbers when they are, numbers
// otherwise. Its bounds are the loader's, which Apply asks.
func pathParam(path, values string) *kinds.Param {
	unit := kinds.Count
	durations, wholes, units := true, true, false
	for _, item := range strings.FieldsFunc(values, func(r rune) bool { return r == ':' || r == ',' }) {
		if strings.HasPrefix(item, "log") {
			continue
		}
		if _, err := time.ParseDuration(item); err != nil {
			durations = false
		}
		if strings.ContainsAny(item, "hmsuµn") {
			units = true
		}
		if _, err := strconv.ParseInt(item, 10, 64); err != nil {
			wholes = false
		}
	}
	switch {
	case durations && units:
		unit = kinds.Duration
	case !wholes:
		unit = kinds.Number
	}
	return &kinds.Param{Name: path, Title: path, Unit: unit, Min: math.MinInt64 / 2, Max: math.MaxInt64 / 2,
		About: "the field at " + path}
}

// IsPath reports whether the parameter is a field set by its path
// (scenarios.Scenario.WithValue) rather than a registered parameter.
func (p *Param) IsPath() bool { _, ok := kinds.LookupParam(p.Name); return !ok }

// Param is one parsed --param: a name and the values it takes.
type Param struct {
	Name   string
	info   *kinds.Param
	Values []int64 // counts, or durations in nanoseconds; increasing
	Note   string  // what rounding a log scale dropped, or ""
}

// Title describes the parameter on a plot's axis.
func (p *Param) Title() string { return p.info.Title }

// Unit is "" for counts and "ms" for durations (as JSON and CSV report them).
func (p *Param) Unit() string {
	if p.info.Unit == kinds.Duration {
		return "ms"
	}
	return ""
}

// Label formats value i as the user would write it.
func (p *Param) Label(i int) string { return p.info.Format(p.Values[i]) }

// Number returns value i as a number: a count, or milliseconds.
func (p *Param) Number(i int) float64 {
	switch p.info.Unit {
	case kinds.Duration:
		return float64(p.Values[i]) / float64(time.Millisecond)
	case kinds.Number:
		return float64(p.Values[i]) / kinds.NumberScale
	}
	return float64(p.Values[i])
}

// Parse reads one --param: NAME=FROM:TO:STEP (FROM, FROM+STEP, ... up to
// TO inclusive), NAME=FROM:TO:logN (N values from FROM to TO, spaced evenly
// on a log scale), NAME=V1,V2,... (a list, in increasing order) or
// NAME=VALUE. Durations take a unit (100ms, 2s); counts are integers.
// Log-spaced values are rounded (counts to whole numbers, durations to three
// significant digits) and the duplicates that leaves are dropped, which
// Param.Note then says.
func Parse(spec string) (Param, error) {
	name, rng, ok := strings.Cut(spec, "=")
	if !ok || name == "" || rng == "" {
		return Param{}, fmt.Errorf("%q: want NAME=FROM:TO:STEP, e.g. clients=10:50:10", spec)
	}
	info, ok := kinds.LookupParam(name)
	if !ok && isPath(name) {
		info = pathParam(name, rng)
	} else if !ok {
		return Param{}, fmt.Errorf("%q: unknown parameter %q%s; choose one of %s, or the path of a field (server.phases[1].duration, policies[NAME].cap)",
			spec, name, suggest.DidYouMean(name, paramNames()), nameList())
	}
	p := Param{Name: name, info: info}
	var err error
	parts := strings.Split(rng, ":")
	switch {
	case len(parts) == 1:
		p.Values, err = listValues(info, rng)
	case len(parts) == 3 && strings.HasPrefix(parts[2], "log"):
		p.Values, p.Note, err = logValues(info, parts)
	case len(parts) == 3:
		p.Values, err = stepValues(info, parts)
	default:
		err = fmt.Errorf("want %s=FROM:TO:STEP, %s=FROM:TO:logN, %s=V1,V2,... or %s=VALUE", name, name, name, name)
	}
	if err != nil {
		return Param{}, fmt.Errorf("%q: %v", spec, err)
	}
	if p.Note != "" {
		p.Note = fmt.Sprintf("%s: %s", spec, p.Note)
	}
	// Values increase, so the first and last bound them.
	switch {
	case p.Values[0] < info.Min:
		return Param{}, fmt.Errorf("%q: %s must be at least %s", spec, name, info.Format(info.Min))
	case p.Values[len(p.Values)-1] > info.Max:
		return Param{}, fmt.Errorf("%q: %s must be at most %s", spec, name, info.Format(info.Max))
	}
	return p, nil
}

// listValues reads V1,V2,...: at least one value, each above the one before.
func listValues(info *kinds.Param, list string) ([]int64, error) {
	items := strings.Split(list, ",")
	if len(items) > MaxValues {
		return nil, fmt.Errorf("%d values; at most %d per parameter", len(items), MaxValues)
	}
	values := make([]int64, len(items))
	for i, item := range items {
		v, err := parseValue(info.Unit, item)
		if err != nil {
			return nil, err
		}
		if i > 0 && v <= values[i-1] {
			return nil, fmt.Errorf("list values must increase: %s after %s", item, items[i-1])
		}
		values[i] = v
	}
	return values, nil
}

// parseRange reads FROM and TO, TO not below FROM.
func parseRange(info *kinds.Param, parts []string) (from, to int64, err error) {
	if from, err = parseValue(info.Unit, parts[0]); err != nil {
		return 0, 0, err
	}
	if to, err = parseValue(info.Unit, parts[1]); err != nil {
		return 0, 0, err
	}
	if to < from {
		return 0, 0, errors.New("TO must not be below FROM")
	}
	return from, to, nil
}

// stepValues reads FROM:TO:STEP.
func stepValues(info *kinds.Param, parts []string) ([]int64, error) {
	from, to, err := parseRange(info, parts)
	if err != nil {
		return nil, err
	}
	step, err := parseValue(info.Unit, parts[2])
	switch {
	case err != nil:
		return nil, err
	case step <= 0:
		return nil, errors.New("STEP must be > 0")
	case from < info.Min: // before counting values from an absurd FROM
		return nil, fmt.Errorf("%s must be at least %s", info.Name, info.Format(info.Min))
	case (to-from)/step+1 > MaxValues:
		return nil, fmt.Errorf("%d values; at most %d per parameter", (to-from)/step+1, MaxValues)
	}
	var values []int64
	for v := from; v <= to; v += step {
		values = append(values, v)
		if v > to-step { // the next step would pass TO (or overflow)
			break
		}
	}
	return values, nil
}

// logValues reads FROM:TO:logN: N values from FROM to TO whose ratio to the
// one before is the same, rounded; the note says how many rounding merged.
func logValues(info *kinds.Param, parts []string) (values []int64, note string, err error) {
	from, to, err := parseRange(info, parts)
	if err != nil {
		return nil, "", err
	}
	n, err := strconv.Atoi(strings.TrimPrefix(parts[2], "log"))
	switch {
	case err != nil || n < 2:
		return nil, "", fmt.Errorf("%q: want logN, N >= 2 values (e.g. log5)", parts[2])
	case n > MaxValues:
		return nil, "", fmt.Errorf("%d values; at most %d per parameter", n, MaxValues)
	case from <= 0:
		return nil, "", errors.New("a log scale needs FROM > 0")
	}
	ratio := math.Log(float64(to) / float64(from))
	for i := range n {
		v := to // exactly TO at the end, whatever the rounding
		if i < n-1 {
			v = roundValue(info.Unit, float64(from)*math.Exp(ratio*float64(i)/float64(n-1)))
			v = min(max(v, from), to) // rounding may pass TO when TO is not round
		}
		if len(values) == 0 || v > values[len(values)-1] {
			values = append(values, v)
		}
	}
	if len(values) < n {
		note = fmt.Sprintf("%d log-spaced values round to %d distinct ones", n, len(values))
	}
	return values, note, nil
}

// roundValue rounds x to a whole number (a count) or to three significant
// digits (a duration in nanoseconds, so 316.227766ms becomes 316ms).
func roundValue(u kinds.ParamUnit, x float64) int64 {
	if (u == kinds.Duration || u == kinds.Number) && x >= 1000 {
		scale := math.Pow(10, math.Floor(math.Log10(x))-2)
		return int64(math.Round(math.Round(x/scale) * scale))
	}
	return int64(math.Round(x))
}

func parseValue(u kinds.ParamUnit, s string) (int64, error) {
	if u == kinds.Duration {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (write e.g. 500ms, 2s)", s)
		}
		if d > scenarios.MaxDuration {
			return 0, fmt.Errorf("%q is longer than %v, the most a scenario allows", s, scenarios.MaxDuration)
		}
		return int64(d), nil
	}
	if u == kinds.Number {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Abs(f) > math.MaxInt64/2/kinds.NumberScale {
			return 0, fmt.Errorf("%q is not a number (write e.g. 0.3)", s)
		}
		return int64(math.Round(f * kinds.NumberScale)), nil
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
	// Fields by path first: the loader decodes the scenario anew for them,
	// which would undo a registered parameter set before.
	for i, p := range ps {
		if !p.IsPath() {
			continue
		}
		c, err := s.WithValue(p.Name, p.info.Format(values[i]))
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %w", p.Name, p.info.Format(values[i]), err)
		}
		s = c
	}
	c := s.Clone()
	for i, p := range ps {
		if p.IsPath() {
			continue
		}
		if err := c.Set(p.info, values[i]); err != nil {
			return nil, fmt.Errorf("%s=%s: %w", p.Name, p.info.Format(values[i]), err)
		}
	}
	return c, nil
}
