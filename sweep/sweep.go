// Package sweep varies one or two parameters of a scenario over a range and
// runs every policy at each point. It changes copies of a loaded
// scenarios.Scenario; the scenario file and its schema stay as they are.
package sweep

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// Limits that keep a typo from starting a run of days.
const (
	MaxParams       = 2
	MaxValues       = 1000   // per parameter
	MaxPoints       = 10_000 // over all parameters
	defaultWindow   = time.Second
	maxSweepClients = scenarios.MaxClients
)

// kind is how a parameter's values are written.
type kind int

const (
	count kind = iota
	duration
)

// paramInfo describes one parameter that can be swept.
type paramInfo struct {
	name  string
	title string // for plot axes
	kind  kind
	min   int64
	about string
	apply func(s *scenarios.Scenario, v int64) error
}

var params = []paramInfo{
	{"clients", "clients", count, 1, "number of clients in the burst", setClients},
	{"capacity", "capacity: requests admitted per window", count, 0, "requests admitted per window in the server's last phase (window 1s if it had none)", setCapacity},
	{"base", "base delay", duration, 1, "base delay of every backoff that has one (not immediate's fixed delay; cap unchanged)", setBase},
	{"delay", "fixed delay", duration, 0, "fixed delay of immediate policies", setDelay},
	{"outage", "outage length", duration, 0, "duration of the server's first phase (0 removes it)", setOutage},
	{"response_time", "response time", duration, 0, "time from each request to its response", setResponseTime},
	{"throttle", "throttle: starts per period", count, 1, "start rate (per period) of every throttled policy", setThrottle},
	{"max_attempts", "max attempts", count, 1, "attempts per operation of every policy", setMaxAttempts},
	{"deadline", "deadline", duration, 1, "deadline per operation of every policy", setDeadline},
}

// Names returns the parameters that can be swept, each with a description.
func Names() [][2]string {
	out := make([][2]string, len(params))
	for i, p := range params {
		out[i] = [2]string{p.name, p.about}
	}
	return out
}

func nameList() string {
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.name
	}
	return strings.Join(names, ", ")
}

// Param is one parsed --param: a name and the values it takes.
type Param struct {
	Name   string
	info   *paramInfo
	Values []int64 // counts, or durations in nanoseconds
}

// Title describes the parameter on a plot's axis.
func (p *Param) Title() string { return p.info.title }

// Unit is "" for counts and "ms" for durations (as JSON and CSV report them).
func (p *Param) Unit() string {
	if p.info.kind == duration {
		return "ms"
	}
	return ""
}

// Label formats value i as the user would write it.
func (p *Param) Label(i int) string {
	if p.info.kind == duration {
		return time.Duration(p.Values[i]).String()
	}
	return strconv.FormatInt(p.Values[i], 10)
}

// Number returns value i as a number: a count, or milliseconds.
func (p *Param) Number(i int) float64 {
	if p.info.kind == duration {
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
	var info *paramInfo
	for i := range params {
		if params[i].name == name {
			info = &params[i]
		}
	}
	if info == nil {
		return Param{}, fmt.Errorf("%q: unknown parameter %q; choose one of %s", spec, name, nameList())
	}
	parts := strings.Split(rng, ":")
	if len(parts) != 1 && len(parts) != 3 {
		return Param{}, fmt.Errorf("%q: want %s=FROM:TO:STEP or %s=VALUE", spec, name, name)
	}
	nums := make([]int64, len(parts))
	for i, s := range parts {
		v, err := parseValue(info.kind, s)
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
	case from < info.min:
		return Param{}, fmt.Errorf("%q: %s must be at least %s", spec, name, formatValue(info.kind, info.min))
	case (to-from)/step+1 > MaxValues:
		return Param{}, fmt.Errorf("%q: %d values; at most %d per parameter", spec, (to-from)/step+1, MaxValues)
	}
	if info.name == "clients" && to > maxSweepClients {
		return Param{}, fmt.Errorf("%q: at most %d clients", spec, maxSweepClients)
	}
	p := Param{Name: name, info: info}
	for v := from; v <= to; v += step {
		p.Values = append(p.Values, v)
		if v > to-step { // the next step would pass TO (or overflow)
			break
		}
	}
	return p, nil
}

func parseValue(k kind, s string) (int64, error) {
	if k == duration {
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

func formatValue(k kind, v int64) string {
	if k == duration {
		return time.Duration(v).String()
	}
	return strconv.FormatInt(v, 10)
}

// Apply returns a copy of s with the parameters set to the given values
// (one per parameter); s itself is not changed.
func Apply(s *scenarios.Scenario, ps []Param, values []int64) (*scenarios.Scenario, error) {
	c := clone(s)
	for i, p := range ps {
		if err := p.info.apply(c, values[i]); err != nil {
			return nil, fmt.Errorf("%s=%s: %w", p.Name, formatValue(p.info.kind, values[i]), err)
		}
	}
	return c, nil
}

// clone copies everything of s that a parameter may change.
func clone(s *scenarios.Scenario) *scenarios.Scenario {
	c := *s
	server := *s.Server
	server.Phases = append([]sim.Phase(nil), s.Server.Phases...)
	c.Server = &server
	c.Policies = append([]sim.Policy(nil), s.Policies...)
	for i := range c.Policies {
		if t := c.Policies[i].Throttle; t != nil {
			tc := *t
			c.Policies[i].Throttle = &tc
		}
	}
	return &c
}

func setClients(s *scenarios.Scenario, v int64) error {
	s.Workload.Clients = int(v)
	return nil
}

func setCapacity(s *scenarios.Scenario, v int64) error {
	if v > 1<<31-1 {
		return errors.New("too large")
	}
	last := &s.Server.Phases[len(s.Server.Phases)-1]
	last.Admit = int(v)
	if last.Window <= 0 {
		last.Window = defaultWindow
	}
	return nil
}

func setBase(s *scenarios.Scenario, v int64) error {
	base := time.Duration(v)
	found := false
	for i := range s.Policies {
		switch b := s.Policies[i].Rules.Backoff.(type) {
		case policies.Exponential:
			b.Base = base
			s.Policies[i].Rules.Backoff = b
		case policies.FullJitter:
			b.Base = base
			s.Policies[i].Rules.Backoff = b
		case policies.EqualJitter:
			b.Base = base
			s.Policies[i].Rules.Backoff = b
		case policies.DecorrelatedJitter:
			b.Base = base
			s.Policies[i].Rules.Backoff = b
		case policies.SDKJitter:
			b.Base = base
			s.Policies[i].Rules.Backoff = b
		default:
			continue
		}
		found = true
	}
	if !found {
		return errors.New("no policy of this scenario has a base delay")
	}
	return nil
}

func setDelay(s *scenarios.Scenario, v int64) error {
	found := false
	for i := range s.Policies {
		if _, ok := s.Policies[i].Rules.Backoff.(policies.Constant); ok {
			s.Policies[i].Rules.Backoff = policies.Constant{Wait: time.Duration(v)}
			found = true
		}
	}
	if !found {
		return errors.New("no policy of this scenario is immediate (has a fixed delay)")
	}
	return nil
}

func setOutage(s *scenarios.Scenario, v int64) error {
	if len(s.Server.Phases) < 2 {
		return errors.New("the server has one phase; an outage needs a first phase followed by another")
	}
	if v == 0 {
		s.Server.Phases = s.Server.Phases[1:]
		return nil
	}
	s.Server.Phases[0].Duration = time.Duration(v)
	return nil
}

func setResponseTime(s *scenarios.Scenario, v int64) error {
	s.Server.ResponseTime = sim.Fixed(time.Duration(v))
	return nil
}

func setThrottle(s *scenarios.Scenario, v int64) error {
	if v > 1<<31-1 {
		return errors.New("too large")
	}
	found := false
	for i := range s.Policies {
		if t := s.Policies[i].Throttle; t != nil {
			t.Count = int(v)
			found = true
		}
	}
	if !found {
		return errors.New("no policy of this scenario has a throttle")
	}
	return nil
}

func setMaxAttempts(s *scenarios.Scenario, v int64) error {
	if v > 1<<31-1 {
		return errors.New("too large")
	}
	for i := range s.Policies {
		s.Policies[i].Rules.MaxAttempts = int(v)
	}
	return nil
}

func setDeadline(s *scenarios.Scenario, v int64) error {
	for i := range s.Policies {
		s.Policies[i].Rules.Deadline = time.Duration(v)
	}
	return nil
}
