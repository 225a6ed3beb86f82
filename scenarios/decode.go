package scenarios

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// FieldError is a problem with one field of a scenario file.
type FieldError struct {
	File   string
	Line   int // 1-based; 0 when unknown
	Column int // 1-based; 0 when unknown
	Field  string
	Msg    string
}

func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// decoder walks a YAML node tree by hand, so that every error names the file,
// line and field, unknown fields are errors, and values are typed strictly.
// It keeps going after an error and reports all of them.
type decoder struct {
	file string
	errs []error
}

func (d *decoder) errorf(n *yaml.Node, field, format string, args ...any) {
	e := &FieldError{File: d.file, Field: field, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

func (d *decoder) err() error { return errors.Join(d.errs...) }

// resolve follows aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// mapping is a YAML mapping being decoded field by field.
type mapping struct {
	d      *decoder
	node   *yaml.Node
	path   string
	values map[string]*yaml.Node
	keys   map[string]*yaml.Node
	order  []string // keys in file order, so errors come out in a fixed order
	used   map[string]bool
}

// mapping starts decoding n as a mapping at path; nil n gives an empty one.
func (d *decoder) mapping(n *yaml.Node, path string) *mapping {
	m := &mapping{d: d, node: n, path: path, values: map[string]*yaml.Node{}, keys: map[string]*yaml.Node{}, used: map[string]bool{}}
	n = resolve(n)
	if n == nil || isNull(n) {
		return m
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a mapping of fields, got %s", describe(n))
		return m
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, path, "field names must be plain strings")
			continue
		}
		if _, dup := m.values[k.Value]; dup {
			d.errorf(k, m.field(k.Value), "field given twice")
			continue
		}
		m.keys[k.Value], m.values[k.Value] = k, v
		m.order = append(m.order, k.Value)
	}
	return m
}

func (m *mapping) field(key string) string {
	if m.path == "" {
		return key
	}
	return m.path + "." + key
}

// get returns the value node of key, or nil when it is absent or null.
func (m *mapping) get(key string) *yaml.Node {
	m.used[key] = true
	v := resolve(m.values[key])
	if v == nil || isNull(v) {
		return nil
	}
	return v
}

func (m *mapping) has(key string) bool { return m.get(key) != nil }

// at returns the node to blame for a problem with key: its value if present,
// else the mapping itself.
func (m *mapping) at(key string) *yaml.Node {
	if v := m.get(key); v != nil {
		return v
	}
	return m.node
}

func (m *mapping) errorf(key, format string, args ...any) {
	m.d.errorf(m.at(key), m.field(key), format, args...)
}

// finish reports fields that were never asked for.
func (m *mapping) finish(known ...string) {
	for _, key := range m.order {
		if !m.used[key] {
			m.d.errorf(m.keys[key], m.field(key), "unknown field (known fields: %s)", strings.Join(known, ", "))
		}
	}
}

func (m *mapping) scalar(key, want string) *yaml.Node {
	v := m.get(key)
	if v == nil {
		return nil
	}
	if v.Kind != yaml.ScalarNode {
		m.d.errorf(v, m.field(key), "want %s, got %s", want, describe(v))
		return nil
	}
	return v
}

func (m *mapping) str(key, def string) string {
	v := m.scalar(key, "a string")
	if v == nil {
		return def
	}
	if v.Tag != "!!str" {
		m.d.errorf(v, m.field(key), "want a string, got %s", describe(v))
		return def
	}
	return v.Value
}

func (m *mapping) boolean(key string, def bool) bool {
	v := m.scalar(key, "true or false")
	if v == nil {
		return def
	}
	if v.Tag != "!!bool" {
		m.d.errorf(v, m.field(key), "want true or false, got %s", describe(v))
		return def
	}
	b, err := strconv.ParseBool(strings.ToLower(v.Value))
	if err != nil {
		m.d.errorf(v, m.field(key), "want true or false, got %q", v.Value)
		return def
	}
	return b
}

// integer reads a whole number in [lo, hi].
func (m *mapping) integer(key string, def, lo, hi int64) int64 {
	v := m.scalar(key, "a whole number")
	if v == nil {
		return def
	}
	if v.Tag != "!!int" {
		m.d.errorf(v, m.field(key), "want a whole number, got %s", describe(v))
		return def
	}
	// Plain decimal only, as in expectations: no hex, no underscores.
	i, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil {
		m.d.errorf(v, m.field(key), "want a whole number between %d and %d, got %s", lo, hi, v.Value)
		return def
	}
	if i < lo || i > hi {
		m.d.errorf(v, m.field(key), "must be between %d and %d, got %d", lo, hi, i)
		return def
	}
	return i
}

// unsigned reads a whole number in [0, 2^64).
func (m *mapping) unsigned(key string, def uint64) uint64 {
	v := m.scalar(key, "a whole number")
	if v == nil {
		return def
	}
	u, err := strconv.ParseUint(v.Value, 10, 64)
	if v.Tag != "!!int" || err != nil {
		m.d.errorf(v, m.field(key), "want a whole number from 0 to %d, got %s", uint64(math.MaxUint64), describe(v))
		return def
	}
	return u
}

// number reads a finite number in [lo, hi].
func (m *mapping) number(key string, def, lo, hi float64) float64 {
	v := m.scalar(key, "a number")
	if v == nil {
		return def
	}
	if v.Tag != "!!int" && v.Tag != "!!float" {
		m.d.errorf(v, m.field(key), "want a number, got %s", describe(v))
		return def
	}
	f, err := strconv.ParseFloat(v.Value, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		m.d.errorf(v, m.field(key), "want a finite number, got %s", v.Value)
		return def
	}
	if f < lo || f > hi {
		m.d.errorf(v, m.field(key), "must be between %g and %g, got %g", lo, hi, f)
		return def
	}
	return f
}

// MaxDuration bounds every duration in a scenario: long enough for any
// experiment, short enough that sums of durations cannot overflow.
const MaxDuration = 1000 * time.Hour

// duration reads a Go duration such as "1.5s" or "100ms", in [0, MaxDuration].
func (m *mapping) duration(key string, def time.Duration) time.Duration {
	v := m.scalar(key, "a duration")
	if v == nil {
		return def
	}
	if v.Tag == "!!int" && strings.TrimLeft(v.Value, "+-0_") == "" {
		return 0 // a bare 0 needs no unit
	}
	if v.Tag != "!!str" {
		m.d.errorf(v, m.field(key), "want a duration with a unit such as \"2s\" or \"100ms\", got %s", describe(v))
		return def
	}
	d, err := time.ParseDuration(v.Value)
	if err != nil {
		m.d.errorf(v, m.field(key), "want a duration such as \"2s\" or \"100ms\", got %q", v.Value)
		return def
	}
	if d < 0 {
		m.d.errorf(v, m.field(key), "must not be negative, got %v", d)
		return def
	}
	if d > MaxDuration {
		m.d.errorf(v, m.field(key), "must be at most %v, got %v", MaxDuration, d)
		return def
	}
	return d
}

// sequence returns the items of the sequence at key; nil when absent.
func (m *mapping) sequence(key string) []*yaml.Node {
	v := m.get(key)
	if v == nil {
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		m.d.errorf(v, m.field(key), "want a list, got %s", describe(v))
		return nil
	}
	return v.Content
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		kind := map[string]string{"!!str": "string", "!!int": "number", "!!float": "number", "!!bool": "boolean", "!!null": "null"}[n.Tag]
		if kind == "" {
			kind = "value"
		}
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		return fmt.Sprintf("%s %q", kind, v)
	}
	return "something else"
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// syntaxError turns a YAML parser error into file:line form.
func syntaxError(file string, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &FieldError{File: file, Line: line, Msg: "invalid YAML: " + msg[len(m[0]):]}
	}
	return &FieldError{File: file, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}
