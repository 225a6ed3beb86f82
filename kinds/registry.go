// Package kinds is retrysim's registry of kinds: every backoff,
// coordinator, distribution, server model and workload a scenario file can
// name is registered here once, with its name, a one-line description, a
// decoder (which reads its own fields from a schema.Mapping), a describer
// (for the HTML report and 'retrysim list'), a clone, what the work
// estimate needs (shortest response, minimum wait), the optional metrics it
// counts and the parameters a sweep can vary. Nothing outside this package
// (and the models' own files in sim/ and policies/) knows which kinds
// exist: the scenario loader, 'retrysim list', the sweep and the HTML
// report all go through it.
package kinds

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

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
			panic("kinds: kind " + string(k.Category) + " " + k.Name + " registered twice")
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
	// Number is a number with a fraction ("0.3"), held in billionths
	// (NumberScale) so that it counts and steps as the others do.
	Number
)

// NumberScale is how many of a Number parameter's units make 1.
const NumberScale = 1e9

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
	// Field, for a parameter of a policy, is its field in a policy's YAML
	// (a dotted path such as "breaker.open_for"), which 'retrysim tune'
	// writes; "" for a parameter of the server or the workload.
	Field string
	// missing says why a scenario in which no part has the parameter
	// cannot be swept over it.
	missing string
	// setters set the parameter on every part of a scenario that has it
	// and report whether one did.
	setters []func(s *Parts, v int64) (bool, error)
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
func (p *Param) Set(s *Parts, v int64) error {
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
	switch p.Unit {
	case Duration:
		return time.Duration(v).String()
	case Number:
		return strconv.FormatFloat(float64(v)/NumberScale, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// forPolicies is a setter over the policies of a scenario: set changes one
// policy, and reports whether it has the parameter.
func forPolicies(set func(p *sim.Policy, v int64) bool) func(s *Parts, v int64) (bool, error) {
	return func(s *Parts, v int64) (bool, error) {
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
	decode   func(m *schema.Mapping) policies.Backoff
	is       func(b policies.Backoff) bool
	describe func(b policies.Backoff) string
	// refuse says why a field of another backoff is not one of this one.
	refuse func(field string) string
	// check, if set, reports a combination of the backoff's values the
	// loader refuses: the field to blame and why. The decoder and
	// Scenario.Validate both ask it.
	check func(b policies.Backoff) (field string, err error)
	// minWait is the smallest wait the backoff can draw before any retry
	// (0 when it can draw 0), for the work estimate.
	minWait func(b policies.Backoff) time.Duration
	// shape gives the backoff's parameters by name (ShapeOf).
	shape func(b policies.Backoff) BackoffShape
}

var backoffKinds []*backoffKind

// BackoffShape is a backoff by its kind's name and parameters: what code in
// another language needs to draw the same waits (package export).
type BackoffShape struct {
	Kind      string        // its name in a scenario file: full-jitter, ...
	Base, Cap time.Duration // immediate: both its delay
	Factor    float64       // 0 for a kind without one
}

// ShapeOf returns b's shape; ok is false for a backoff of no registered kind.
func ShapeOf(b policies.Backoff) (BackoffShape, bool) {
	for _, k := range backoffKinds {
		if k.is(b) {
			return k.shape(b), true
		}
	}
	return BackoffShape{}, false
}

// backoffParam is a sweepable parameter of a backoff of type B.
type backoffParam[B policies.Backoff] struct {
	param *Param
	set   func(b B, v int64) B
}

// registerBackoff registers a backoff kind whose values are of type B.
// check may be nil.
func registerBackoff[B policies.Backoff](name, about string, fields []string, decode func(m *schema.Mapping) B,
	describe func(b B) string, refuse func(field string) string, check func(b B) (string, error),
	minWait func(b B) time.Duration, shape func(b B) BackoffShape, ps ...backoffParam[B]) {
	k := &backoffKind{
		Kind:     registerKind(&Kind{Category: Backoffs, Name: name, About: about, Fields: fields}),
		decode:   func(m *schema.Mapping) policies.Backoff { return decode(m) },
		is:       func(b policies.Backoff) bool { _, ok := b.(B); return ok },
		describe: func(b policies.Backoff) string { return describe(b.(B)) },
		refuse:   refuse,
		minWait:  func(b policies.Backoff) time.Duration { return minWait(b.(B)) },
		shape:    func(b policies.Backoff) BackoffShape { return shape(b.(B)) },
	}
	if check != nil {
		k.check = func(b policies.Backoff) (string, error) { return check(b.(B)) }
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

// MinWait is the smallest wait b can draw before any retry; 0 when it is
// not known (a backoff no kind has).
func MinWait(b policies.Backoff) time.Duration {
	for _, k := range backoffKinds {
		if k.is(b) {
			return k.minWait(b)
		}
	}
	return 0
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
	apply func(m *schema.Mapping, p *sim.Policy)
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
	decode   func(d *schema.Decoder, m *schema.Mapping, p *sim.Policy, on bool)
	describe func(p *sim.Policy) string
	// is reports whether a spec of sim.Policy.Coordinators is this kind's
	// (nil for a kind that is not a coordinator spec: the fallback).
	is func(s machine.Spec) bool
	// clone, if set, copies what the kind keeps behind a pointer, so that
	// a Clone of a scenario can be changed alone (the specs are values).
	clone func(p *sim.Policy)
	// paces says that the coordinator spaces attempts in time, so that
	// retries with no wait cannot all happen at one instant.
	paces bool
	// noun names the coordinator in a sentence ("a circuit breaker"); ""
	// names it by the kind's name.
	noun string
	// scale, if set, scales the coordinator's capacities (rates, slots)
	// of p by f for the work estimate's pilot (scale.go); nil: it cannot
	// be scaled.
	scale func(p *sim.Policy, f float64) error
}

var coordinatorKinds []*coordinatorKind

func registerCoordinator(k *coordinatorKind) { coordinatorKinds = append(coordinatorKinds, k) }

// isSpec reports whether s is of type S.
func isSpec[S machine.Spec](s machine.Spec) bool { _, ok := s.(S); return ok }

// specOf returns p's coordinator spec of type S, if it has one.
func specOf[S machine.Spec](p *sim.Policy) (S, bool) {
	for _, s := range p.Coordinators {
		if c, ok := s.(S); ok {
			return c, true
		}
	}
	var zero S
	return zero, false
}

// setSpec gives p the coordinator spec s: in place of its spec of the same
// type, or else among its specs in the order of registration, which is the
// order the documentation gives.
func setSpec[S machine.Spec](p *sim.Policy, s S) {
	for i, o := range p.Coordinators {
		if _, ok := o.(S); ok {
			p.Coordinators[i] = s
			return
		}
	}
	rank := specRank(s)
	i := 0
	for i < len(p.Coordinators) && specRank(p.Coordinators[i]) <= rank {
		i++
	}
	p.Coordinators = slices.Insert(p.Coordinators, i, machine.Spec(s))
}

// specRank is the registration index of s's kind; after every kind for a
// spec no kind has.
func specRank(s machine.Spec) int {
	for i, k := range coordinatorKinds {
		if k.is != nil && k.is(s) {
			return i
		}
	}
	return len(coordinatorKinds)
}

// CoordinatorNoun names the kind of a coordinator spec in a sentence: "a
// circuit breaker".
func CoordinatorNoun(s machine.Spec) string {
	if r := specRank(s); r < len(coordinatorKinds) {
		if k := coordinatorKinds[r]; k.noun != "" {
			return k.noun
		}
		return coordinatorKinds[r].Name
	}
	return fmt.Sprintf("%T", s)
}

// paced reports whether a coordinator of p spaces its attempts in time.
func paced(p *sim.Policy) bool {
	for _, s := range p.Coordinators {
		if r := specRank(s); r < len(coordinatorKinds) && coordinatorKinds[r].paces {
			return true
		}
	}
	return false
}

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

// serverKind is a server model. A scenario has exactly one server, chosen
// by the type field of its server mapping; capacity-windows, the first
// registered, is the default.
type serverKind struct {
	*Kind
	decode func(d *schema.Decoder, m *schema.Mapping, path string) sim.ServerModel
	is     func(s sim.ServerModel) bool
	// describe returns a table of the model's rules for the HTML report.
	describe func(s sim.ServerModel) Table
	// minResponse is the shortest time from a request to its response the
	// model can give (0 when it does not know better), for the work
	// estimate.
	minResponse func(s sim.ServerModel) time.Duration
	// extraEvents is how many engine events an attempt may cost the model
	// beyond the estimate's EventsPerAttempt (0 for most), for the bound.
	extraEvents func(s sim.ServerModel) float64
	// instant reports whether the model answers every request at the
	// instant it arrives, with no server wait (false when it does not
	// know): retries with no wait against it never let time pass.
	instant func(s sim.ServerModel) bool
	// metrics names the optional metrics (metrics.For) the model counts.
	metrics func(s sim.ServerModel) []string
	// inner returns the models the model wraps (a rate limit's), whose
	// parameters a sweep sets too.
	inner func(s sim.ServerModel) []sim.ServerModel
	// clone returns a copy that can be changed alone.
	clone func(s sim.ServerModel) sim.ServerModel
	// scale scales the capacity of a clone by f (scale.go); nil: the model
	// cannot be scaled.
	scale func(s sim.ServerModel, f float64) (sim.ServerModel, error)
}

var serverKinds []*serverKind

// serverFuncs are the functions of a server kind whose models are of type M.
type serverFuncs[M sim.ServerModel] struct {
	decode      func(d *schema.Decoder, m *schema.Mapping, path string) M
	describe    func(s M) Table
	minResponse func(s M) time.Duration
	extraEvents func(s M) float64
	instant     func(s M) bool
	metrics     func(s M) []string
	inner       func(s M) []sim.ServerModel
	clone       func(s M) M
	scale       func(s M, f float64) (M, error)
}

// serverParam is a sweepable parameter of a server of type M: set changes
// the model (a clone) in place.
type serverParam[M sim.ServerModel] struct {
	param *Param
	set   func(s M, v int64) error
}

// registerServer registers a server kind whose models are of type M.
func registerServer[M sim.ServerModel](k *Kind, f serverFuncs[M], ps ...serverParam[M]) {
	k.Category = Servers
	sk := &serverKind{
		Kind:     registerKind(k),
		decode:   func(d *schema.Decoder, m *schema.Mapping, path string) sim.ServerModel { return f.decode(d, m, path) },
		is:       func(s sim.ServerModel) bool { _, ok := s.(M); return ok },
		describe: func(s sim.ServerModel) Table { return f.describe(s.(M)) },
		minResponse: func(s sim.ServerModel) time.Duration {
			if f.minResponse == nil {
				return 0
			}
			return f.minResponse(s.(M))
		},
		extraEvents: func(s sim.ServerModel) float64 {
			if f.extraEvents == nil {
				return 0
			}
			return f.extraEvents(s.(M))
		},
		instant: func(s sim.ServerModel) bool { return f.instant != nil && f.instant(s.(M)) },
		metrics: func(s sim.ServerModel) []string {
			if f.metrics == nil {
				return nil
			}
			return f.metrics(s.(M))
		},
		inner: func(s sim.ServerModel) []sim.ServerModel {
			if f.inner == nil {
				return nil
			}
			return f.inner(s.(M))
		},
		clone: func(s sim.ServerModel) sim.ServerModel { return f.clone(s.(M)) },
	}
	if f.scale != nil {
		sk.scale = func(s sim.ServerModel, x float64) (sim.ServerModel, error) { return f.scale(s.(M), x) }
	}
	for _, p := range ps {
		k.Params = append(k.Params, p.param)
		p.param.setters = append(p.param.setters, func(s *Parts, v int64) (bool, error) {
			found := false
			for _, part := range serverParts(s.Server) {
				if m, ok := part.(M); ok {
					found = true
					if err := p.set(m, v); err != nil {
						return true, err
					}
				}
			}
			return found, nil
		})
	}
	serverKinds = append(serverKinds, sk)
}

// serverKindOf returns the kind of a server model; nil for a model no
// kind has.
func serverKindOf(s sim.ServerModel) *serverKind {
	for _, k := range serverKinds {
		if k.is(s) {
			return k
		}
	}
	return nil
}

func lookupServer(name string) *serverKind {
	for _, k := range serverKinds {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// serverParts returns s and every model it wraps, outermost first.
func serverParts(s sim.ServerModel) []sim.ServerModel {
	out := []sim.ServerModel{s}
	if k := serverKindOf(s); k != nil {
		for _, in := range k.inner(s) {
			out = append(out, serverParts(in)...)
		}
	}
	return out
}

// workloadKind is a workload model, chosen by the type field of a
// scenario's clients mapping; burst, the first registered, is the default.
type workloadKind struct {
	*Kind
	decode   func(d *schema.Decoder, m *schema.Mapping, path string) sim.Workload
	is       func(w sim.Workload) bool
	describe func(w sim.Workload) string
	metrics  func(w sim.Workload) []string
	clone    func(w sim.Workload) sim.Workload
	// scale scales the clients of a clone by f (scale.go); nil: the
	// workload cannot be scaled.
	scale func(w sim.Workload, f float64) (sim.Workload, error)
}

var workloadKinds []*workloadKind

// workloadFuncs are the functions of a workload kind whose values are of
// type W.
type workloadFuncs[W sim.Workload] struct {
	decode   func(d *schema.Decoder, m *schema.Mapping, path string) W
	describe func(w W) string
	metrics  func(w W) []string
	clone    func(w W) W
	scale    func(w W, f float64) (W, error)
}

// workloadParam is a sweepable parameter of a workload of type W: set
// returns the changed workload (changing a clone's pointers in place is
// fine), or why it cannot.
type workloadParam[W sim.Workload] struct {
	param *Param
	set   func(w W, v int64) (W, error)
}

// registerWorkload registers a workload kind whose values are of type W.
func registerWorkload[W sim.Workload](k *Kind, f workloadFuncs[W], ps ...workloadParam[W]) {
	k.Category = Workloads
	wk := &workloadKind{
		Kind:     registerKind(k),
		decode:   func(d *schema.Decoder, m *schema.Mapping, path string) sim.Workload { return f.decode(d, m, path) },
		is:       func(w sim.Workload) bool { _, ok := w.(W); return ok },
		describe: func(w sim.Workload) string { return f.describe(w.(W)) },
		metrics: func(w sim.Workload) []string {
			if f.metrics == nil {
				return nil
			}
			return f.metrics(w.(W))
		},
		clone: func(w sim.Workload) sim.Workload { return f.clone(w.(W)) },
	}
	if f.scale != nil {
		wk.scale = func(w sim.Workload, x float64) (sim.Workload, error) { return f.scale(w.(W), x) }
	}
	for _, p := range ps {
		k.Params = append(k.Params, p.param)
		p.param.setters = append(p.param.setters, func(s *Parts, v int64) (bool, error) {
			w, ok := s.Workload.(W)
			if !ok {
				return false, nil
			}
			w, err := p.set(w, v)
			if err != nil {
				return true, err
			}
			s.Workload = w
			return true, nil
		})
	}
	workloadKinds = append(workloadKinds, wk)
}

func workloadKindOf(w sim.Workload) *workloadKind {
	for _, k := range workloadKinds {
		if k.is(w) {
			return k
		}
	}
	return nil
}

func lookupWorkload(name string) *workloadKind {
	for _, k := range workloadKinds {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// Table is a table for the HTML report: a caption, a header and rows;
// Numeric marks the columns of numbers (aligned right).
type Table struct {
	Caption string
	Header  []string
	Numeric []bool
	Rows    [][]string
}

// DescribeServer describes a server model as a table, as its kind does.
func DescribeServer(s sim.ServerModel) Table {
	if k := serverKindOf(s); k != nil {
		return k.describe(s)
	}
	return Table{Caption: fmt.Sprintf("Server (%T)", s)}
}

// DescribeWorkload describes a workload in a line, as its kind does.
func DescribeWorkload(w sim.Workload) string {
	if k := workloadKindOf(w); k != nil {
		return k.describe(w)
	}
	return fmt.Sprintf("%d operations", w.Operations())
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// KindName returns the registered kind name of a server model or workload
// ("contention", "closed-loop"), as a scenario file writes it; for a value
// that no kind has, its Go type.
func KindName(v any) string {
	switch x := v.(type) {
	case sim.ServerModel:
		if k := serverKindOf(x); k != nil {
			return k.Name
		}
	case sim.Workload:
		if k := workloadKindOf(x); k != nil {
			return k.Name
		}
	}
	return fmt.Sprintf("%T", v)
}
