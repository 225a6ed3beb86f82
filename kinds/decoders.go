package kinds

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

// The decoders of the server models and workloads other than the default
// ones, and what they share: distributions and capacity traces.
// models.go registers them.

// distribution reads a distribution at key: a duration (always that
// duration) or a mapping with one key, the name of a distribution kind
// (distributions.go): {fixed: 100ms}, {exponential: 100ms} (the mean),
// {lognormal: {median: 1s, p99: 10s}}, {normal: {mean: 10ms, stddev: 2ms}}
// (folded: |N(mean, stddev)|) or {uniform: [50ms, 150ms]}. It returns def
// when key is absent or wrong.
func distribution(m *schema.Mapping, key string, def sim.Distribution) sim.Distribution {
	m.NoteDistribution(key)
	v := m.Get(key)
	if v == nil {
		return def
	}
	if v.Kind == yaml.ScalarNode {
		if d := m.Duration(key, -1); d >= 0 {
			return sim.Fixed(d)
		}
		return def
	}
	if v.Kind != yaml.MappingNode {
		m.Errorf(key, "want a duration or a distribution such as {exponential: 100ms}, got %s", schema.Describe(v))
		return def
	}
	dm := m.Decoder().Mapping(v, m.Field(key))
	if len(dm.Keys()) != 1 {
		for _, k := range dm.Keys() {
			dm.Get(k)
		}
		m.Decoder().Errorf(v, dm.Path(), "want one distribution: a mapping with one of %s, such as {exponential: 100ms}", strings.Join(distributionNames(), ", "))
		return def
	}
	before := m.Decoder().Problems()
	var out sim.Distribution
	if k := lookupDistribution(dm.Keys()[0]); k != nil {
		out = k.decode(dm)
	}
	dm.Finish(distributionNames()...)
	if m.Decoder().Problems() > before || out == nil {
		return def
	}
	return out
}

// distParams opens the mapping of the parameters of the distribution
// name; nil (after an error) when it is null, which has no position of
// its own.
func distParams(dm *schema.Mapping, name, want string) *schema.Mapping {
	if dm.Get(name) == nil {
		dm.Errorf(name, "want %s", want)
		return nil
	}
	return dm.Decoder().Mapping(dm.Get(name), dm.Field(name))
}

// traceLine is the prefix of the errors of sim's trace readers.
var traceLine = regexp.MustCompile(`^capacity trace: line (\d+): `)

// traceRows reads the CSV file named by m's trace field, relative to the
// scenario file's folder, with parse. Errors name the CSV file and line.
func traceRows[T any](d *schema.Decoder, m *schema.Mapping, parse func(io.Reader) ([]T, error)) []T {
	name := m.Str("trace", "")
	switch {
	case name == "" && m.Has("trace"):
		m.Errorf("trace", "want the path of a CSV file")
		return nil
	case d.Dir == "":
		m.Errorf("trace", "cannot read %q: traces are read next to a scenario file loaded from disk (--file PATH), and this one was not", name)
		return nil
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(d.Dir, name)
	}
	read := d.Read
	if read == nil {
		read = schema.ReadFile
	}
	data, err := read(path)
	if err != nil {
		m.Errorf("trace", "%v", err)
		return nil
	}
	rows, err := parse(bytes.NewReader(data))
	if err != nil {
		msg := err.Error()
		if loc := traceLine.FindStringSubmatchIndex(msg); loc != nil {
			msg = fmt.Sprintf("%s:%s: %s", name, msg[loc[2]:loc[3]], msg[loc[1]:])
		} else {
			msg = name + ": " + strings.TrimPrefix(msg, "capacity trace: ")
		}
		m.Errorf("trace", "%s", msg)
		return nil
	}
	return rows
}

// oneOf reports a problem unless at most one of keys is set, and returns
// the one set ("" for none).
func oneOf(m *schema.Mapping, keys ...string) string {
	set := ""
	for _, k := range keys {
		if !m.Has(k) {
			continue
		}
		if set != "" {
			m.Errorf(k, "set one of %s, not both %s and %s", strings.Join(keys, ", "), set, k)
			continue
		}
		set = k
	}
	return set
}

// phaseDurations checks the duration of each phase but the last (> 0) and
// returns it.
func phaseDuration(pm *schema.Mapping, last bool) time.Duration {
	d := pm.Duration("duration", 0)
	if !last && d == 0 {
		pm.Errorf("duration", "must be > 0: only the last phase may run on forever")
	}
	return d
}

// Servers.

// Workloads.

// decodeInner decodes a wrapper's inner server; without one it says it is
// missing (what: the server it wants, with an example) and returns nil.
func decodeInner(d *schema.Decoder, m *schema.Mapping, what string) sim.ServerModel {
	if !m.Has("inner") {
		if m.Node() != nil {
			m.Errorf("inner", "missing: %s", what)
		}
		return nil
	}
	return DecodeServer(d, m.Get("inner"), m.Field("inner"))
}

// needOneOf says, at the first of fields, that a mapping that is there
// sets none of them; what names them ("price").
func needOneOf(m *schema.Mapping, what string, fields ...string) {
	if m.Node() == nil || slices.ContainsFunc(fields, m.Has) {
		return
	}
	m.Errorf(fields[0], "missing: set at least one %s (%s)", what, strings.Join(fields, ", "))
}
