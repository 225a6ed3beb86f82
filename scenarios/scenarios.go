// Package scenarios loads, validates and fills in defaults for retrysim's
// scenario files (scenarios.yaml). docs/scenarios.md describes the schema.
// Every error names the file, the line and the field.
package scenarios

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	retrysim "github.com/retrysim/retrysim"
	"github.com/retrysim/retrysim/internal/suggest"
	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

// Defaults of the file model; those of the kinds are in package kinds
// (docs/scenarios.md lists them all).
const (
	DefaultSeed = 1
	// MaxCheckSeeds bounds check_seeds.
	MaxCheckSeeds = 100_000
)

// BuiltinFile is the name under which the embedded scenarios.yaml is reported.
const BuiltinFile = "scenarios.yaml (built in)"

// File is a loaded scenario file.
type File struct {
	Path      string
	Default   string // name of the scenario that runs when none is named
	Scenarios []*Scenario
}

// Scenario is one experiment: a server, a workload, and the policies to
// compare on it.
type Scenario struct {
	Name        string
	Description string
	Seed        uint64
	// Server is the server model (the type field of the server mapping;
	// the first server kind by default) and Workload the operations'
	// workload (the type field of clients; the first workload kind by default).
	Server   sim.ServerModel
	Workload sim.Workload
	// Priorities, if set, give the workload's operations priorities by
	// share (the clients' priorities field; sim.Config.Priorities).
	Priorities sim.PriorityShares
	Policies   []sim.Policy
	// Incident, if set (End > 0), is the span of the scenario's trigger;
	// runs then measure their recovery (sim.Recovery; the recovery.*
	// metrics).
	Incident sim.Incident
	// CheckSeeds is how many seeds, Seed first, the statistics of
	// expectations (such as mean(completed)) are taken over; 0 when the
	// scenario has none. 'retrysim check --seeds' overrides it.
	CheckSeeds int
	// Expect lists the expectations of every policy, in file order.
	Expect []Expect
	// src is the YAML s was decoded from (WithValue); nil for a scenario
	// built in Go.
	src *source
}

// Config returns the simulator configuration for the i-th policy and a seed.
func (s *Scenario) Config(i int, seed uint64) sim.Config {
	return sim.Config{Seed: seed, Server: s.Server, Workload: s.Workload, Policy: s.Policies[i], Incident: s.Incident, Priorities: s.Priorities}
}

// Operations is the most operations one run of the scenario starts: a
// burst's clients, a closed loop's workers × operations each, or an open
// loop's expected arrivals (a run draws about as many).
func (s *Scenario) Operations() int { return s.Workload.Operations() }

// Metrics returns the metrics reported for the scenario: those of
// metrics.For its policies, the optional ones its server and workload
// count (such as the server's wasted work, or the sessions completed),
// those by priority for the levels its workload gives (metrics.ForLevels),
// and then the parts' counters its expectations name (metrics.Counter), in
// the order they first appear.
func (s *Scenario) Metrics() []*metrics.Metric {
	counted := kinds.Counted(s.Server, s.Workload)
	if s.Incident != (sim.Incident{}) {
		counted = append(counted, RecoveryNames()...)
	}
	ps := s.Policies
	if w, ok := s.Workload.(interface{ FixedPolicies() ([]*sim.Policy, bool) }); ok {
		// A client group's own policy counts what it does too (fallbacks).
		fixed, _ := w.FixedPolicies()
		ps = slices.Clone(ps)
		for _, p := range fixed {
			ps = append(ps, *p)
		}
	}
	out := metrics.For(ps, counted...)
	out = append(out, metrics.ForLevels(out, s.PriorityLevels())...)
	for _, e := range s.Expect {
		if m, ok := metrics.Counter(e.Metric); ok && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// OneSeedMetrics are the metrics of a one-seed report's rows: Metrics
// without the parts' counters, which its breakdown tables (pool members,
// retry layers) carry.
func (s *Scenario) OneSeedMetrics() []*metrics.Metric { return metrics.WithoutCounters(s.Metrics()) }

// partMissing says which part a counter of one (metrics.Counter) that e
// names is missing from the scenario: a member of its pool, a retry layer
// of e's policy; "" when it has the part, or e names another metric.
func (s *Scenario) partMissing(e Expect) string {
	kind, part, _, ok := metrics.CounterPart(e.Metric)
	if _, counter := metrics.Counter(e.Metric); !ok || !counter {
		return ""
	}
	switch kind {
	case "pool":
		pool, ok := sim.ModelAs[sim.MemberModel](s.Server)
		if !ok {
			return "a pool member, but the scenario's server is not a pool"
		}
		if names := pool.MemberNames(); !slices.Contains(names, part) {
			return fmt.Sprintf("pool member %q, which the pool lacks (its members: %s)", part, strings.Join(names, ", "))
		}
	case "layers":
		p := &s.Policies[e.Policy]
		names := []string{"outer"}
		for _, l := range p.Layers {
			names = append(names, l.Name)
		}
		if len(p.Layers) == 0 {
			return fmt.Sprintf("retry layer %q, but policy %q has no layers", part, p.Name)
		}
		if !slices.Contains(names, part) {
			return fmt.Sprintf("retry layer %q, which policy %q lacks (its levels: %s)", part, p.Name, strings.Join(names, ", "))
		}
	}
	return ""
}

// PriorityLevels returns the priorities the scenario's operations may
// have, highest first: those its workload gives, or its priorities field's;
// none when neither gives any.
func (s *Scenario) PriorityLevels() []sim.Priority {
	if w, ok := s.Workload.(sim.PriorityLevels); ok && w.PriorityLevels() != nil {
		return w.PriorityLevels()
	}
	return s.Priorities.PriorityLevels()
}

// levelMissing says why the scenario does not report m, a metric by
// priority; "" for any other metric.
func (s *Scenario) levelMissing(m *metrics.Metric) string {
	p, _, ok := m.Level()
	if !ok {
		return ""
	}
	var names []string
	for _, l := range s.PriorityLevels() {
		names = append(names, l.String())
	}
	if len(names) == 0 {
		return "its workload gives no priorities"
	}
	if !slices.Contains(names, p.String()) {
		return fmt.Sprintf("its workload gives no operation priority %v (its levels: %s)", p, strings.Join(names, ", "))
	}
	return "its server, workload and policies do not count the metric it is of"
}

// Lookup returns the scenario called name, or an error listing those there are.
func (f *File) Lookup(name string) (*Scenario, error) {
	for _, s := range f.Scenarios {
		if s.Name == name {
			return s, nil
		}
	}
	names := make([]string, len(f.Scenarios))
	for i, s := range f.Scenarios {
		names[i] = s.Name
	}
	return nil, fmt.Errorf("%s: no scenario %q%s (have: %s)", f.Path, name, suggest.DidYouMean(name, names), strings.Join(names, ", "))
}

// Builtin returns the scenarios shipped inside the binary.
func Builtin() (*File, error) {
	return Parse(BuiltinFile, retrysim.BuiltinScenarios)
}

// Load reads and parses a scenario file of at most MaxFileSize bytes. The
// capacity traces it names (trace: file.csv) are read relative to the
// file's folder.
func Load(path string) (*File, error) {
	data, err := schema.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseIn(path, data, filepath.Dir(path))
}

// Parse decodes and validates scenario YAML; name is used in error messages.
// It returns the problems it finds, joined: the first schema.MaxErrors of
// them and a count of the rest. It reads no files: a capacity trace is an
// error (use Load or ParseIn).
func Parse(name string, data []byte) (f *File, err error) {
	return parse(name, data, "", nil)
}

// ParseIn is Parse for YAML whose capacity traces are read relative to the
// folder dir (standard input's: the working directory, ".").
func ParseIn(name string, data []byte, dir string) (f *File, err error) {
	if dir == "" {
		dir = "."
	}
	return parse(name, data, dir, nil)
}

// ParseWith is ParseIn with the capacity traces read by read, given
// each trace's path joined to dir, instead of from disk: a caller can
// record what was read, or serve copies recorded before (shards).
func ParseWith(name string, data []byte, dir string, read func(path string) ([]byte, error)) (*File, error) {
	if dir == "" {
		dir = "."
	}
	return parse(name, data, dir, read)
}

func parse(name string, data []byte, dir string, read func(string) ([]byte, error)) (f *File, err error) {
	defer func() {
		// The YAML parser is third-party code: never let it crash the tool.
		if r := recover(); r != nil {
			f, err = nil, &FieldError{File: name, Msg: fmt.Sprintf("cannot parse: %v", r)}
		}
	}()
	d := &schema.Decoder{File: name, Dir: dir, Read: read}
	f = decode(d, data)
	if err := d.Err(); err != nil {
		return nil, err
	}
	return f, nil
}

// decode decodes and validates data, recording every problem in d. It
// returns nil when the YAML itself cannot be read.
func decode(d *schema.Decoder, data []byte) *File {
	doc := d.Document(data)
	if doc == nil {
		return nil
	}
	return decodeTopLevel(d, doc)
}

func decodeTopLevel(d *schema.Decoder, n *yaml.Node) *File {
	f := &File{Path: d.File}
	m := d.Mapping(n, "")
	f.Default = m.Str("default", "")
	items := m.Sequence("scenarios")
	if len(items) == 0 && m.Get("scenarios") == nil {
		m.Errorf("scenarios", "missing: the file needs a list of scenarios")
	} else if len(items) == 0 {
		m.Errorf("scenarios", "the list is empty")
	}
	seen := map[string]bool{}
	for i, item := range items {
		s := decodeScenario(d, item, fmt.Sprintf("scenarios[%d]", i))
		if s.Name != "" && seen[s.Name] {
			d.Errorf(item, fmt.Sprintf("scenarios[%d].name", i), "scenario %q is defined twice", s.Name)
		}
		seen[s.Name] = true
		f.Scenarios = append(f.Scenarios, s)
	}
	if f.Default == "" && len(f.Scenarios) > 0 {
		f.Default = f.Scenarios[0].Name
	} else if f.Default != "" && len(items) > 0 && !seen[f.Default] {
		m.Errorf("default", "no scenario is called %q", f.Default)
	}
	m.Finish()
	return f
}

func decodeScenario(d *schema.Decoder, n *yaml.Node, path string) *Scenario {
	m := d.Mapping(n, path)
	s := &Scenario{}
	s.Name = m.Str("name", "")
	if s.Name == "" {
		m.Errorf("name", "missing: every scenario needs a name")
	} else if strings.ContainsAny(s.Name, " \t\n,") {
		m.Errorf("name", "must not contain spaces or commas, got %q", s.Name)
	}
	s.Description = m.Str("description", "")
	s.Seed = m.Unsigned("seed", DefaultSeed)
	if !m.Has("server") {
		m.Errorf("server", "missing: every scenario needs a server")
	}
	s.Server = kinds.DecodeServer(d, m.Get("server"), m.Field("server"))
	if !m.Has("clients") {
		m.Errorf("clients", "missing: every scenario needs clients")
	}
	if m.Has("incident") {
		s.Incident = decodeIncident(d, m.Get("incident"), m.Field("incident"))
	}
	var limits kinds.Limits
	s.Workload, limits = kinds.DecodeClients(d, m.Get("clients"), m.Field("clients"))
	s.Priorities = limits.Priorities
	items := m.Sequence("policies")
	if len(items) == 0 {
		m.Errorf("policies", "missing: list at least one policy to compare")
	}
	s.CheckSeeds = int(m.Integer("check_seeds", 0, 1, MaxCheckSeeds))
	seen := map[string]bool{}
	for i, item := range items {
		field := fmt.Sprintf("%s.policies[%d]", path, i)
		var expect []Expect
		p := kinds.DecodePolicy(d, item, field, limits, func(m *schema.Mapping) []string {
			expect = decodeExpectations(d, m)
			return []string{"expect"}
		})
		if p.Name != "" && seen[p.Name] {
			d.Errorf(item, field+".name", "policy %q appears twice in this scenario", p.Name)
		}
		seen[p.Name] = true
		for _, e := range expect {
			e.Policy = i
			s.Expect = append(s.Expect, e)
			if e.OverSeeds() && !m.Has("check_seeds") {
				d.Errorf(e.node, e.field, "%s is a statistic over seeds: set check_seeds on the scenario (how many seeds, from seed %d on)", e.Text, s.Seed)
			}
		}
		s.Policies = append(s.Policies, p)
	}
	if m.Has("check_seeds") && !slices.ContainsFunc(s.Expect, func(e Expect) bool { return e.OverSeeds() }) {
		m.Errorf("check_seeds", "has no effect: no expectation of this scenario takes a statistic over seeds, such as mean(completed)")
	}
	if d.Problems() == 0 {
		// An optional metric that no part of the scenario reports would
		// have no value to check.
		reported := s.Metrics()
		for _, e := range s.Expect {
			if why := s.partMissing(e); why != "" {
				d.Errorf(e.node, e.field, "%s names %s", e.Metric, why)
			} else if m, ok := metrics.Lookup(e.Metric); ok && !slices.Contains(reported, m) && s.levelMissing(m) != "" {
				d.Errorf(e.node, e.field, "%s is not reported for this scenario: %s", e.Metric, s.levelMissing(m))
			} else if m, ok := metrics.Lookup(e.Metric); ok && m.Optional() && !slices.Contains(reported, m) {
				d.Errorf(e.node, e.field, "%s is not reported for this scenario: its server, workload and policies do not count it", e.Metric)
			}
		}
	}
	for i := range s.Expect {
		s.Expect[i].node = nil // let the YAML tree go
	}
	// Whatever the simulator would still refuse (combinations of fields),
	// report here, at the policy, rather than when it runs.
	if d.Problems() == 0 {
		for i := range s.Policies {
			if field, err := s.policyProblem(i); err != nil {
				d.Errorf(items[i], fmt.Sprintf("%s.policies[%d]%s", path, i, field), "%v", err)
			}
		}
	}
	m.Finish("name", "description", "seed", "check_seeds", "incident", "server", "clients", "policies")
	s.src = &source{node: n, path: path, file: d.File, dir: d.Dir, read: d.Read}
	return s
}

// incident decodes a scenario's incident: {start, end}.
func decodeIncident(d *schema.Decoder, n *yaml.Node, path string) sim.Incident {
	m := d.Mapping(n, path)
	in := sim.Incident{Start: m.Duration("start", 0), End: m.Duration("end", 0)}
	switch {
	case !m.Has("end"):
		m.Errorf("end", "missing: when the trigger ends, such as 30s")
	case in.End <= in.Start:
		m.Errorf("end", "must be after start (%v), got %v", in.Start, in.End)
	}
	m.Finish()
	return in
}

// FieldError is a problem with one field of a scenario file (schema's).
type FieldError = schema.FieldError

// MaxFileSize bounds the size of a scenario file, in bytes
// (schema.MaxFileSize).
const MaxFileSize = schema.MaxFileSize

// MaxDuration bounds every duration in a scenario (schema.MaxDuration).
const MaxDuration = schema.MaxDuration

// ReadFile reads the file at path, as scenario files and capacity traces
// are read: no more than MaxFileSize+1 bytes, refusing a larger file.
func ReadFile(path string) ([]byte, error) { return schema.ReadFile(path) }

// Parts returns the parts of s that kinds make up.
func (s *Scenario) Parts() kinds.Parts {
	return kinds.Parts{Server: s.Server, Workload: s.Workload, Policies: s.Policies}
}

// Clone returns a copy of s that a parameter can be set on without
// changing s (kinds.Parts.Clone).
func (s *Scenario) Clone() *Scenario {
	c := *s
	parts := s.Parts().Clone()
	c.Server, c.Workload, c.Policies = parts.Server, parts.Workload, parts.Policies
	return &c
}

// Set sets the sweep parameter p to v on every part of s that has it (s
// is changed: set it on a Clone), or says why it cannot.
func (s *Scenario) Set(p *kinds.Param, v int64) error {
	parts := s.Parts()
	err := p.Set(&parts, v)
	s.Server, s.Workload, s.Policies = parts.Server, parts.Workload, parts.Policies
	return err
}
