// Package scenarios loads, validates and fills in defaults for retrysim's
// scenario files (scenarios.yaml). docs/scenarios.md describes the schema.
// Every error names the file, the line and the field.
package scenarios

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	retrysim "github.com/retrysim/retrysim"
	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

// Defaults, all in one place. docs/scenarios.md lists them too.
const (
	DefaultSeed         = 1
	DefaultResponseTime = 100 * time.Millisecond
	DefaultImmediate    = 100 * time.Millisecond // wait of the immediate policy
	DefaultBase         = 500 * time.Millisecond
	DefaultFactor       = 2.0
	DefaultCap          = 8 * time.Second
	DefaultThrottlePer  = time.Second
	DefaultRetryAfter   = time.Second // wait a rate-limited rejection carries
	// DefaultNetwork and DefaultNetworkStdDev are a contention server's
	// network delay, |N(10 ms, 2 ms)| as in the AWS backoff study.
	DefaultNetwork       = 10 * time.Millisecond
	DefaultNetworkStdDev = 2 * time.Millisecond
	// MaxClients bounds a burst so that a typo cannot exhaust memory.
	MaxClients = 50_000_000
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
	// *sim.CapacityWindows by default) and Workload the operations'
	// workload (the type field of clients; sim.Burst by default).
	Server   sim.ServerModel
	Workload sim.Workload
	Policies []sim.Policy
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
}

// Config returns the simulator configuration for the i-th policy and a seed.
func (s *Scenario) Config(i int, seed uint64) sim.Config {
	return sim.Config{Seed: seed, Server: s.Server, Workload: s.Workload, Policy: s.Policies[i], Incident: s.Incident}
}

// Operations is the most operations one run of the scenario starts: a
// burst's clients, a closed loop's workers × operations each, or an open
// loop's expected arrivals (a run draws about as many).
func (s *Scenario) Operations() int { return s.Workload.Operations() }

// Metrics returns the metrics reported for the scenario: those of
// metrics.For its policies, and the optional ones its server and workload
// count (such as the server's wasted work, or the sessions completed).
func (s *Scenario) Metrics() []*metrics.Metric {
	var counted []string
	for _, part := range serverParts(s.Server) {
		if k := serverKindOf(part); k != nil {
			counted = append(counted, k.metrics(part)...)
		}
	}
	if k := workloadKindOf(s.Workload); k != nil {
		counted = append(counted, k.metrics(s.Workload)...)
	}
	if s.Incident != (sim.Incident{}) {
		counted = append(counted, metrics.RecoveryNames()...)
	}
	return metrics.For(s.Policies, counted...)
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
	return nil, fmt.Errorf("%s: no scenario %q (have: %s)", f.Path, name, strings.Join(names, ", "))
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
// It returns the problems it finds, joined: the first MaxErrors of them and
// a count of the rest. It reads no files: a capacity trace is an error
// (use Load or ParseIn).
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
	s.Server = decodeServer(d, m.Get("server"), m.Field("server"))
	if !m.Has("clients") {
		m.Errorf("clients", "missing: every scenario needs clients")
	}
	if m.Has("incident") {
		s.Incident = decodeIncident(d, m.Get("incident"), m.Field("incident"))
	}
	var limits limits
	s.Workload, limits = decodeClients(d, m.Get("clients"), m.Field("clients"))
	items := m.Sequence("policies")
	if len(items) == 0 {
		m.Errorf("policies", "missing: list at least one policy to compare")
	}
	s.CheckSeeds = int(m.Integer("check_seeds", 0, 1, MaxCheckSeeds))
	seen := map[string]bool{}
	for i, item := range items {
		field := fmt.Sprintf("%s.policies[%d]", path, i)
		p, expect := decodePolicy(d, item, field, limits)
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
			if m, ok := metrics.Lookup(e.Metric); ok && m.Optional() && !slices.Contains(reported, m) {
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

// rejections are the outcomes a server can give a request it does not admit.
var rejections = map[string]sim.Rejection{
	"overloaded":   {Status: 529, Class: policies.Capacity},
	"unavailable":  {Status: 503, Class: policies.Capacity},
	"rate-limited": {Status: 429, Class: policies.RetryAfter, RetryAfter: DefaultRetryAfter},
	"server-error": {Status: 500, Class: policies.Transient},
	"timeout":      {Status: 504, Class: policies.Transient},
	"bad-request":  {Status: 400, Class: policies.Terminal},
	// A 429 whose body says a spend limit was reached: terminal for
	// retrysim's own rule, retried by the SDKs' status rule.
	"spend-limit": {Status: 429, Class: policies.Terminal},
}

const rejectionNames = "overloaded (529), unavailable (503), rate-limited (429), server-error (500), timeout (504), bad-request (400), spend-limit (429, terminal)"

// server decodes a server mapping: its type (default capacity-windows)
// and that kind's fields. It returns nil when the type is unknown.
func decodeServer(d *schema.Decoder, n *yaml.Node, path string) sim.ServerModel {
	m := d.Mapping(n, path)
	typ := m.Str("type", serverKinds[0].Name)
	k := lookupServer(typ)
	if k == nil {
		m.Errorf("type", "unknown server type %q; choose one of %s", typ, kindNames(Servers))
		return nil
	}
	before := d.Problems()
	s := k.decode(d, m, path)
	m.Finish(append([]string{"type"}, k.Fields...)...)
	if d.Problems() == before && n != nil {
		// Whatever the model would still refuse (combinations of fields).
		if err := s.Validate(); err != nil {
			d.Errorf(n, path, "%v", err)
		}
	}
	return s
}

// rejection reads the reject and retry_after fields of m: the outcome of a
// request that is not admitted, def by default.
func rejection(m *schema.Mapping, def string) sim.Rejection {
	name := m.Str("reject", def)
	rej, ok := rejections[name]
	if !ok {
		m.Errorf("reject", "unknown outcome %q; choose one of %s", name, rejectionNames)
	}
	if m.Has("retry_after") {
		rej.RetryAfter = m.Duration("retry_after", rej.RetryAfter)
	}
	return rej
}

// capacityWindows reads the fields of a capacity-windows server: phases,
// or a trace with the window and rejection of every phase.
func decodeCapacityWindows(d *schema.Decoder, m *schema.Mapping, path string) *sim.CapacityWindows {
	s := &sim.CapacityWindows{ResponseTime: distribution(m, "response_time", sim.Fixed(DefaultResponseTime))}
	if m.Has("trace") {
		if m.Has("phases") {
			m.Errorf("phases", "set phases or trace, not both")
		}
		window := m.Duration("window", time.Second)
		if window == 0 {
			m.Errorf("window", "must be > 0")
			window = time.Second
		}
		rej := rejection(m, "overloaded")
		s.Phases = traceRows(d, m, func(r io.Reader) ([]sim.Phase, error) { return sim.WindowPhasesFromCSV(r, window, rej) })
		return s
	}
	for _, f := range []string{"window", "reject", "retry_after"} {
		if m.Has(f) {
			m.Errorf(f, "is a field of each phase (here only with trace)")
		}
	}
	items := m.Sequence("phases")
	if len(items) == 0 && m.Node() != nil {
		m.Errorf("phases", "missing: the server needs at least one phase (or a trace)")
	}
	s.Phases = decodeWindowPhases(d, items, path+".phases")
	if m.Has("fallback_phases") {
		fb := m.Sequence("fallback_phases")
		if len(fb) == 0 {
			m.Errorf("fallback_phases", "must list at least one phase")
		}
		s.FallbackPhases = decodeWindowPhases(d, fb, path+".fallback_phases")
	}
	return s
}

// windowPhases decodes a list of capacity phases.
func decodeWindowPhases(d *schema.Decoder, items []*yaml.Node, path string) []sim.Phase {
	var phases []sim.Phase
	for i, item := range items {
		field := fmt.Sprintf("%s[%d]", path, i)
		pm := d.Mapping(item, field)
		p := sim.Phase{Duration: pm.Duration("duration", 0)}
		last := i == len(items)-1
		if !last && p.Duration == 0 {
			pm.Errorf("duration", "must be > 0: only the last phase may run on forever")
		}
		errsBefore := d.Problems()
		p.Admit = int(pm.Integer("admit", 0, 0, 1<<31-1))
		p.Window = pm.Duration("window", 0)
		switch {
		case d.Problems() > errsBefore:
			// The admit or the window itself was bad; that error says enough.
		case p.Admit > 0 && p.Window == 0:
			pm.Errorf("window", "must be > 0 when the phase admits requests (admit %d per window)", p.Admit)
		case p.Admit == 0 && pm.Has("window"):
			pm.Errorf("window", "has no effect: this phase admits nothing (set admit > 0)")
		}
		p.Reject = rejection(pm, "overloaded")
		pm.Finish()
		phases = append(phases, p)
	}
	return phases
}

// limits are the per-operation bounds that the clients section sets for every
// policy and a policy may override. maxAttempts is 0…2^31−1; 0 sets no bound
// of its own, and an operation still stops after 2^31−1 attempts
// (policies.Op's counter).
type limits struct {
	maxAttempts int
	deadline    time.Duration
}

// clients decodes the clients mapping: the workload (its type, default
// burst, and that kind's fields) and the per-operation limits. The
// workload is nil when the type is unknown.
func decodeClients(d *schema.Decoder, n *yaml.Node, path string) (sim.Workload, limits) {
	m := d.Mapping(n, path)
	typ := m.Str("type", workloadKinds[0].Name)
	k := lookupWorkload(typ)
	var w sim.Workload
	before := d.Problems()
	if k == nil {
		m.Errorf("type", "unknown workload type %q; choose one of %s", typ, kindNames(Workloads))
	} else {
		w = k.decode(d, m, path)
	}
	l := limits{
		maxAttempts: int(m.Integer("max_attempts", 0, 0, 1<<31-1)),
		deadline:    m.Duration("deadline", 0),
	}
	if k == nil {
		return nil, l
	}
	m.Finish(append(append([]string{"type"}, k.Fields...), "max_attempts", "deadline")...)
	if d.Problems() == before && n != nil {
		if err := validateWorkload(w); err != nil {
			d.Errorf(n, path, "%v", err)
		}
	}
	return w, l
}

func decodePolicy(d *schema.Decoder, n *yaml.Node, path string, lim limits) (sim.Policy, []Expect) {
	m := d.Mapping(n, path)
	p := sim.Policy{Name: m.Str("name", "")}
	if p.Name == "" {
		m.Errorf("name", "missing: every policy needs a name")
	} else if strings.ContainsAny(p.Name, " \t\n,") {
		m.Errorf("name", "must not contain spaces or commas, got %q", p.Name)
	}
	typ := m.Str("type", "")
	if typ == "" && knownType(p.Name) {
		typ = p.Name
	}
	switch {
	case typ == "" && p.Name != "":
		m.Errorf("type", "missing: %q is not a policy type, so give one of %s", p.Name, typeNames())
	case typ != "" && !knownType(typ):
		m.Errorf("type", "unknown policy type %q; choose one of %s", typ, typeNames())
	}

	// The backoff: the type's own, or for a preset its default, which the
	// backoff field may change.
	backoff := lookupBackoff(typ)
	var on []string
	if pre := lookupPreset(typ); pre != nil {
		name := m.Str("backoff", pre.backoff)
		if backoff = lookupBackoff(name); backoff == nil {
			m.Errorf("backoff", "unknown backoff %q for a %s policy; choose one of %s", name, pre.name, backoffNames())
		}
		on = pre.coordinators
	} else if m.Has("backoff") {
		m.Errorf("backoff", "only a policy of a preset type (%s) chooses its backoff; the type names it here", presetNames())
	}
	if backoff == nil {
		backoff = lookupBackoff("full-jitter") // keep decoding, to report what else is wrong
	}
	p.Rules.Backoff = backoff.decode(m)
	for _, f := range backoffFields() {
		if !contains(backoff.Fields, f) && m.Has(f) {
			m.Errorf(f, "%s", backoff.refuse(f))
		}
	}
	known := append([]string{"name", "type"}, backoffFields()...)
	known = append(known, "backoff")
	for _, k := range coordinatorKinds {
		k.decode(d, m, &p, contains(on, k.Name))
		known = append(known, k.Fields...)
	}
	p.Rules.MaxAttempts = int(m.Integer("max_attempts", int64(lim.maxAttempts), 0, 1<<31-1))
	p.Rules.Deadline = m.Duration("deadline", lim.deadline)
	decodeRules(d, m, &p.Rules)
	known = append(known, rulesFields...)
	if pre := lookupPreset(typ); pre != nil && pre.apply != nil {
		pre.apply(m, &p)
	}
	if p.Rules.MaxAttempts == 0 && p.Rules.Deadline == 0 && n != nil {
		m.Errorf("max_attempts", "set max_attempts or deadline (here or under clients): without either, an operation against a server that never admits it would retry forever")
	}
	expect := decodeExpectations(d, m)
	m.Finish(append(known, "max_attempts", "deadline", "expect")...)
	return p, expect
}

func backoffNames() string {
	var names []string
	for _, k := range backoffKinds {
		names = append(names, k.Name)
	}
	return strings.Join(names, ", ")
}

func presetNames() string {
	var names []string
	for _, p := range presets {
		names = append(names, p.name)
	}
	return strings.Join(names, ", ")
}

func decodeThrottle(d *schema.Decoder, n *yaml.Node, path string) policies.ThrottleConfig {
	m := d.Mapping(n, path)
	if !m.Has("rate") {
		m.Errorf("rate", "missing: how many starts per period (per, default 1s)")
	}
	t := policies.ThrottleConfig{
		Count:    int(m.Integer("rate", 1, 1, 1<<31-1)),
		Per:      m.Duration("per", DefaultThrottlePer),
		MaxQueue: int(m.Integer("max_queue", 0, 0, 1<<31-1)),
	}
	if t.Per == 0 {
		m.Errorf("per", "must be > 0")
	}
	m.Finish()
	return t
}

// FieldError is a problem with one field of a scenario file (schema's).
type FieldError = schema.FieldError

// MaxFileSize bounds the size of a scenario file, in bytes
// (schema.MaxFileSize).
const MaxFileSize = schema.MaxFileSize

// MaxErrors is how many problems with a file are listed
// (schema.MaxErrors).
const MaxErrors = schema.MaxErrors

// MaxDuration bounds every duration in a scenario (schema.MaxDuration).
const MaxDuration = schema.MaxDuration

// ReadFile reads the file at path, as scenario files and capacity traces
// are read: no more than MaxFileSize+1 bytes, refusing a larger file.
func ReadFile(path string) ([]byte, error) { return schema.ReadFile(path) }
