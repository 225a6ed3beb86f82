package scenarios

import (
	"fmt"
	"strings"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/sim"
)

// The kind registry. Every kind of backoff, coordinator, server and
// workload that a scenario file can name is registered once, in
// kinds_*.go, with its name, a one-line description, a decoder (which
// reads its own fields and lets the loader report the others), a
// describer (for the HTML report and 'retrysim list') and the parameters a
// sweep can vary. Nothing outside the registration knows which kinds
// exist: the loader, 'retrysim list', the sweep and the HTML report all
// go through it.

// Category is a family of kinds.
type Category string

const (
	Backoffs     Category = "backoff"
	Coordinators Category = "coordinator"
	Servers      Category = "server"
	Workloads    Category = "workload"
)

// Kind describes one registered kind.
type Kind struct {
	Category Category
	Name     string
	// About is a one-line description, as 'retrysim list' prints it.
	About string
	// Fields are the fields of a scenario file the kind reads (for a
	// coordinator: the policy fields that turn it on and configure it).
	Fields []string
	// Params are the parameters of the kind that a sweep can vary.
	Params []*Param
}

// kinds holds every registered kind in registration order.
var kinds []*Kind

func registerKind(k *Kind) *Kind {
	for _, o := range kinds {
		if o.Category == k.Category && o.Name == k.Name {
			panic("scenarios: kind " + string(k.Category) + " " + k.Name + " registered twice")
		}
	}
	kinds = append(kinds, k)
	return k
}

// Kinds returns the kinds of a category in registration order.
func Kinds(c Category) []Kind {
	var out []Kind
	for _, k := range kinds {
		if k.Category == c {
			out = append(out, *k)
		}
	}
	return out
}

// ParamUnit is how a parameter's values are written.
type ParamUnit int

const (
	// Count is a whole number.
	Count ParamUnit = iota
	// Duration is a Go duration with a unit ("500ms"); sweeps report it
	// in milliseconds.
	Duration
)

// Param is a parameter that a sweep can vary: a field of one or more kinds
// (base is a field of every exponential backoff), or of every policy
// (max_attempts).
type Param struct {
	Name string
	// Title describes the parameter on a plot's axis.
	Title string
	// About describes it in a line of help.
	About string
	Unit  ParamUnit
	// Min and Max bound its values.
	Min, Max int64
	// missing says why a scenario in which no part has the parameter
	// cannot be swept over it.
	missing string
	// setters set the parameter on every part of a scenario that has it
	// and report whether one did.
	setters []func(s *Scenario, v int64) (bool, error)
}

// params holds every parameter in registration order, the order in which
// 'retrysim sweep --help' lists them.
var params []*Param

func registerParam(p *Param) *Param {
	params = append(params, p)
	return p
}

// Params returns every parameter a sweep can vary.
func Params() []*Param { return append([]*Param(nil), params...) }

// LookupParam finds a parameter by name.
func LookupParam(name string) (*Param, bool) {
	for _, p := range params {
		if p.Name == name {
			return p, true
		}
	}
	return nil, false
}

// Set sets the parameter to v on every part of s that has it (s is
// changed: set it on a Clone), or says why it cannot.
func (p *Param) Set(s *Scenario, v int64) error {
	if v < p.Min || v > p.Max {
		return fmt.Errorf("must be between %s and %s", p.Format(p.Min), p.Format(p.Max))
	}
	found := false
	for _, set := range p.setters {
		ok, err := set(s, v)
		if err != nil {
			return err
		}
		found = found || ok
	}
	if !found {
		return fmt.Errorf("%s", p.missing)
	}
	return nil
}

// Format writes a value of the parameter as a user writes it.
func (p *Param) Format(v int64) string {
	if p.Unit == Duration {
		return time.Duration(v).String()
	}
	return fmt.Sprint(v)
}

// forPolicies is a setter over the policies of a scenario: set changes one
// policy, and reports whether it has the parameter.
func forPolicies(set func(p *sim.Policy, v int64) bool) func(s *Scenario, v int64) (bool, error) {
	return func(s *Scenario, v int64) (bool, error) {
		found := false
		for i := range s.Policies {
			if set(&s.Policies[i], v) {
				found = true
			}
		}
		return found, nil
	}
}

// Backoff kinds.

// backoffKind is a registered backoff: the policy fields it reads, how to
// decode and describe it, and how to tell that a policies.Backoff is one.
type backoffKind struct {
	*Kind
	decode   func(m *mapping) policies.Backoff
	is       func(b policies.Backoff) bool
	describe func(b policies.Backoff) string
	// refuse says why a field of another backoff is not one of this one.
	refuse func(field string) string
}

var backoffKinds []*backoffKind

// backoffParam is a sweepable parameter of a backoff of type B.
type backoffParam[B policies.Backoff] struct {
	param *Param
	set   func(b B, v int64) B
}

// registerBackoff registers a backoff kind whose values are of type B.
func registerBackoff[B policies.Backoff](name, about string, fields []string, decode func(m *mapping) B,
	describe func(b B) string, refuse func(field string) string, ps ...backoffParam[B]) {
	k := &backoffKind{
		Kind:     registerKind(&Kind{Category: Backoffs, Name: name, About: about, Fields: fields}),
		decode:   func(m *mapping) policies.Backoff { return decode(m) },
		is:       func(b policies.Backoff) bool { _, ok := b.(B); return ok },
		describe: func(b policies.Backoff) string { return describe(b.(B)) },
		refuse:   refuse,
	}
	for _, p := range ps {
		k.Params = append(k.Params, p.param)
		p.param.setters = append(p.param.setters, forPolicies(func(pol *sim.Policy, v int64) bool {
			b, ok := pol.Rules.Backoff.(B)
			if ok {
				pol.Rules.Backoff = p.set(b, v)
			}
			return ok
		}))
	}
	backoffKinds = append(backoffKinds, k)
}

func lookupBackoff(name string) *backoffKind {
	for _, k := range backoffKinds {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// backoffFields is every field some backoff kind reads.
func backoffFields() []string {
	var out []string
	for _, k := range backoffKinds {
		for _, f := range k.Fields {
			if !contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// DescribeBackoff writes a backoff's shape with its parameters, as its kind
// describes it; the backoff's String() when no kind has it.
func DescribeBackoff(b policies.Backoff) string {
	if b == nil {
		return "none"
	}
	for _, k := range backoffKinds {
		if k.is(b) {
			return k.describe(b)
		}
	}
	if s, ok := b.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", b)
}

// Policy presets.

// preset is a policy type that is not a backoff: a default backoff (which
// the policy's backoff field may change) and coordinators on by default.
type preset struct {
	name, about  string
	backoff      string
	coordinators []string
	// apply, if set, gives the preset's own defaults (backoff parameters,
	// attempts, control settings) to what the policy did not set itself.
	apply func(m *mapping, p *sim.Policy)
}

var presets []*preset

func registerPreset(p *preset) { presets = append(presets, p) }

func lookupPreset(name string) *preset {
	for _, p := range presets {
		if p.name == name {
			return p
		}
	}
	return nil
}

// PolicyType is a value a policy's type field can take.
type PolicyType struct{ Name, About string }

// PolicyTypes returns the policy types: every backoff kind, then the
// presets.
func PolicyTypes() []PolicyType {
	var out []PolicyType
	for _, k := range backoffKinds {
		out = append(out, PolicyType{k.Name, k.About})
	}
	for _, p := range presets {
		out = append(out, PolicyType{p.name, p.about})
	}
	return out
}

func typeNames() string {
	var names []string
	for _, t := range PolicyTypes() {
		names = append(names, t.Name)
	}
	return strings.Join(names, ", ")
}

func knownType(name string) bool { return lookupBackoff(name) != nil || lookupPreset(name) != nil }

// Coordinator kinds.

// coordinatorKind is shared coordination a policy turns on with fields of
// its own (Kind.Fields): decode reads them into the policy (on is true when
// the policy's type turns the coordinator on by default), describe says
// what it does ("" when the policy does not have it).
type coordinatorKind struct {
	*Kind
	decode   func(d *decoder, m *mapping, p *sim.Policy, on bool)
	describe func(p *sim.Policy) string
	// clone copies what the coordinator keeps behind a pointer, so that a
	// Clone of a scenario can be changed alone.
	clone func(p *sim.Policy)
}

var coordinatorKinds []*coordinatorKind

func registerCoordinator(k *coordinatorKind) { coordinatorKinds = append(coordinatorKinds, k) }

// DescribeCoordination lists, in words, the shared coordination of p;
// "none" when it has none.
func DescribeCoordination(p *sim.Policy) string {
	var parts []string
	for _, k := range coordinatorKinds {
		if s := k.describe(p); s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// Servers and workloads.

// serverKind is a server model. A scenario has exactly one server; the
// only kind there is, capacity-windows, is the default.
type serverKind struct {
	*Kind
	decode func(d *decoder, m *mapping, path string) *sim.CapacityWindows
	// describe returns a caption and the rows of a table (header first).
	describe func(s *sim.CapacityWindows) (caption string, header []string, rows [][]string)
}

var serverKinds []*serverKind

// workloadKind is a workload model; burst, the only kind, is the default.
type workloadKind struct {
	*Kind
	decode   func(d *decoder, m *mapping, w *sim.Burst)
	describe func(w sim.Burst) string
}

var workloadKinds []*workloadKind

// DescribeServer describes s as a caption and a table (header, rows).
func DescribeServer(s *sim.CapacityWindows) (caption string, header []string, rows [][]string) {
	return serverKinds[0].describe(s)
}

// DescribeWorkload describes w in a line.
func DescribeWorkload(w sim.Burst) string { return workloadKinds[0].describe(w) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
