package kinds

import (
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

// Defaults of the kinds, all in one place. docs/scenarios.md lists them
// too.
const (
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
	MaxClients = 100_000_000
)

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

// DecodeServer decodes a server mapping: its type (default capacity-windows)
// and that kind's fields. It returns nil when the type is unknown.
func DecodeServer(d *schema.Decoder, n *yaml.Node, path string) sim.ServerModel {
	m := d.Mapping(n, path)
	typ := m.Str("type", serverKinds[0].Name)
	k := lookupServer(typ)
	if k == nil {
		m.Errorf("type", "unknown server type %q%s; choose one of %s", typ, didYouMean(typ, kindNames(Servers)), kindNames(Servers))
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
		m.Errorf("reject", "unknown outcome %q%s; choose one of %s", name, didYouMean(name, rejectionNames), rejectionNames)
	}
	if m.Has("retry_after") {
		rej.RetryAfter = m.Duration("retry_after", rej.RetryAfter)
	}
	return rej
}

// decodePriority reads the priority of field key (critical, default,
// sheddable or a whole number), def when it is absent.
func decodePriority(m *schema.Mapping, key string, def sim.Priority) sim.Priority {
	n := m.Scalar(key, "a priority")
	if n == nil {
		return def
	}
	p, err := sim.ParsePriority(n.Value)
	if err != nil {
		m.Errorf(key, "%v", err)
		return def
	}
	return p
}

// decodePriorities reads the clients' priorities mapping, {critical: 0.2,
// sheddable: 0.3}: the share of operations at each priority (a name or a
// whole number), the rest at the default. The shares are listed highest
// priority first, whatever the file's order.
func decodePriorities(d *schema.Decoder, n *yaml.Node, path string) sim.PriorityShares {
	m := d.Mapping(n, path)
	var ps sim.PriorityShares
	for _, key := range m.Keys() {
		p, err := sim.ParsePriority(key)
		if err != nil {
			m.Errorf(key, "%v", err)
			continue
		}
		ps = append(ps, sim.PriorityShare{Priority: p, Share: m.Number(key, 0, 0, 1)})
	}
	slices.SortStableFunc(ps, func(a, b sim.PriorityShare) int { return int(b.Priority) - int(a.Priority) })
	if err := ps.Validate(); err != nil && d.Problems() == 0 {
		d.Errorf(n, path, "%v", err)
	}
	return ps
}

// Limits are the per-operation bounds that the clients section sets for every
// policy and a policy may override. maxAttempts is 0…2^31−1; 0 sets no bound
// of its own, and an operation still stops after 2^31−1 attempts
// (machine.Op's counter).
type Limits struct {
	MaxAttempts int
	Deadline    time.Duration
	// Priorities are the clients' priorities field (not a limit: it rides
	// along, as every policy's operations have them).
	Priorities sim.PriorityShares
}

// DecodeClients decodes the clients mapping: the workload (its type, default
// burst, and that kind's fields) and the per-operation limits. The
// workload is nil when the type is unknown.
func DecodeClients(d *schema.Decoder, n *yaml.Node, path string) (sim.Workload, Limits) {
	m := d.Mapping(n, path)
	typ := m.Str("type", workloadKinds[0].Name)
	k := lookupWorkload(typ)
	var w sim.Workload
	before := d.Problems()
	if k == nil {
		m.Errorf("type", "unknown workload type %q%s; choose one of %s", typ, didYouMean(typ, kindNames(Workloads)), kindNames(Workloads))
	} else {
		w = k.decode(d, m, path)
	}
	l := Limits{
		MaxAttempts: int(m.Integer("max_attempts", 0, 0, 1<<31-1)),
		Deadline:    m.Duration("deadline", 0),
	}
	if m.Has("priorities") {
		l.Priorities = decodePriorities(d, m.Get("priorities"), m.Field("priorities"))
		if own, ok := w.(sim.PriorityLevels); ok && own.PriorityLevels() != nil {
			m.Errorf("priorities", "this workload gives its operations priorities itself (agent sessions' background, each group's)")
		} else if _, own := w.(sim.Prioritizer); own && w != nil {
			m.Errorf("priorities", "this workload gives its operations priorities of its own")
		}
	}
	if k == nil {
		return nil, l
	}
	m.Finish(append(append([]string{"type"}, k.Fields...), "max_attempts", "deadline", "priorities")...)
	if d.Problems() == before && n != nil {
		if err := ValidateWorkload(w); err != nil {
			d.Errorf(n, path, "%v", err)
		}
	}
	return w, l
}

// DecodePolicy decodes a policy mapping: its name, type (a backoff or a
// preset), backoff, coordinators and rules, with the clients' limits as
// defaults. more, if set, reads the fields the file model adds (a
// policy's expectations) and returns their names, before unknown fields
// are reported.
func DecodePolicy(d *schema.Decoder, n *yaml.Node, path string, lim Limits, more func(m *schema.Mapping) []string) sim.Policy {
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
		m.Errorf("type", "unknown policy type %q%s; choose one of %s", typ, didYouMean(typ, typeNames()), typeNames())
	}

	// The backoff: the type's own, or for a preset its default, which the
	// backoff field may change.
	backoff := lookupBackoff(typ)
	var on []string
	if pre := lookupPreset(typ); pre != nil {
		name := m.Str("backoff", pre.backoff)
		if backoff = lookupBackoff(name); backoff == nil {
			m.Errorf("backoff", "unknown backoff %q%s for a %s policy; choose one of %s", name, didYouMean(name, backoffNames()), pre.name, backoffNames())
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
	p.Rules.MaxAttempts = int(m.Integer("max_attempts", int64(lim.MaxAttempts), 0, 1<<31-1))
	p.Rules.Deadline = m.Duration("deadline", lim.Deadline)
	decodeRules(d, m, &p.Rules)
	known = append(known, rulesFields...)
	if pre := lookupPreset(typ); pre != nil && pre.apply != nil {
		pre.apply(m, &p)
	}
	checkRetryOn(m, &p.Rules, typ)
	if p.Rules.MaxAttempts == 0 && p.Rules.Deadline == 0 && n != nil {
		m.Errorf("max_attempts", "set max_attempts or deadline (here or under clients): without either, an operation against a server that never admits it would retry forever")
	}
	known = append(known, "max_attempts", "deadline")
	if more != nil {
		known = append(known, more(m)...)
	}
	m.Finish(known...)
	return p
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
