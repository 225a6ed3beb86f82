package schema

import (
	"math"

	"go.yaml.in/yaml/v3"
)

// ScalarKind is the type a typed reader reads a field as.
type ScalarKind int

const (
	KindString ScalarKind = iota
	KindBoolean
	KindInteger
	KindNumber
	KindDuration
	// KindDistribution is a duration or a mapping that draws one (a
	// distribution such as {exponential: 100ms}).
	KindDistribution
)

// NoteDistribution tells d.Scalars that the field key of m is a
// distribution (KindDistribution); the decoder that reads it calls it
// before it reads the field, given or not.
func (m *Mapping) NoteDistribution(key string) {
	m.d.note(m.Field(key), KindDistribution, 0, 0, m.value(key))
}

// Numeric reports whether a field of the kind is a number or a duration:
// what a sweep can vary.
func (k ScalarKind) Numeric() bool { return k == KindInteger || k == KindNumber || k == KindDuration }

// Scalar is a scalar field that a decoder read through a typed reader
// (Str, Boolean, Integer, Unsigned, Number, Duration, DurationOf,
// DurationItem), given in the file or not: the walker's own record of
// the fields it knows and how it checks them, so that nothing else has to
// list them (sweeps by path, the JSON Schema).
type Scalar struct {
	Path string // "scenarios[0].server.phases[1].duration"
	Kind ScalarKind
	// Min and Max bound an integer or a number as the reader checks it;
	// a duration is within [0, MaxDuration].
	Min, Max float64
	// Node is the value as the file gives it; nil when absent.
	Node *yaml.Node
}

// note tells d.Scalars, if set, of a field read.
func (d *Decoder) note(path string, kind ScalarKind, lo, hi float64, n *yaml.Node) {
	if d.Scalars == nil {
		return
	}
	if kind == KindDuration || kind == KindDistribution {
		lo, hi = 0, float64(MaxDuration)
	}
	d.Scalars(Scalar{Path: path, Kind: kind, Min: lo, Max: hi, Node: n})
}

// value is m's value of key for note: nil when absent or null.
func (m *Mapping) value(key string) *yaml.Node {
	v := Resolve(m.values[key])
	if v == nil || isNull(v) {
		return nil
	}
	return v
}

var noBounds = [2]float64{math.Inf(-1), math.Inf(1)}
