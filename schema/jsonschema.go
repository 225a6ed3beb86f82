package schema

import (
	"math"
	"regexp"
	"slices"
)

// A Probe records what decoders read from the documents they are given
// (Decoder.Known and Decoder.Scalars), so that a JSON Schema can be made
// of the decoders themselves rather than of a second list of fields.
type Probe struct {
	known   map[string][]string
	scalars map[string]Scalar // by Pattern of the path
	// Types, if set, is a probe whose scalars Object also asks (one that
	// decoded more documents), after p's own.
	Types *Probe
}

// Pattern is a field's path without the scenario's index and with every
// list index taken out: "server.phases[].duration".
func Pattern(path string) string {
	path = scenarioIndex.ReplaceAllString(path, "")
	return listIndex.ReplaceAllString(path, "[]")
}

var (
	scenarioIndex = regexp.MustCompile(`^scenarios\[[0-9]+\]\.?`)
	listIndex     = regexp.MustCompile(`\[[^\]]*\]`)
)

// scalar returns what p (or p.Types) saw read at path.
func (p *Probe) scalar(path string) (Scalar, bool) {
	for q := p; q != nil; q = q.Types {
		if s, ok := q.scalars[Pattern(path)]; ok {
			return s, true
		}
	}
	return Scalar{}, false
}

// NewProbe returns an empty probe.
func NewProbe() *Probe {
	return &Probe{known: map[string][]string{}, scalars: map[string]Scalar{}}
}

// Decoder returns a decoder that tells p what it reads.
func (p *Probe) Decoder(file string) *Decoder {
	return &Decoder{File: file,
		Known: func(path string, fields []string) {
			for _, f := range fields {
				if !slices.Contains(p.known[path], f) {
					p.known[path] = append(p.known[path], f)
				}
			}
		},
		Scalars: func(s Scalar) {
			if _, ok := p.scalars[Pattern(s.Path)]; !ok {
				p.scalars[Pattern(s.Path)] = s
			}
		}}
}

// Object is the JSON Schema of the mappings at paths (their fields
// merged): an object with the fields their decoders know and no others,
// each field typed as its reader reads it, or as fields gives it, or
// anything when the probe saw no typed read of it.
func (p *Probe) Object(paths []string, fields map[string]any) map[string]any {
	props := map[string]any{}
	for _, path := range paths {
		for _, f := range p.known[path] {
			if _, done := props[f]; done {
				continue
			}
			switch s, ok := p.scalar(join(path, f)); {
			case fields[f] != nil:
				props[f] = fields[f]
			case ok:
				props[f] = ScalarSchema(s)
			default:
				props[f] = map[string]any{}
			}
		}
	}
	for f, v := range fields {
		if _, done := props[f]; !done {
			props[f] = v
		}
	}
	return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// durationPattern matches what time.ParseDuration reads, without a sign
// (durations are never negative).
var durationPattern = `^(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h))+$`

// maxExact is the largest whole number a JSON number holds exactly.
const maxExact = 1 << 53

// ScalarSchema is the JSON Schema of a scalar field as its reader checks
// it: its type and bounds.
func ScalarSchema(s Scalar) map[string]any {
	bounded := func(out map[string]any) map[string]any {
		if !math.IsInf(s.Min, 0) && math.Abs(s.Min) <= maxExact {
			out["minimum"] = s.Min
		}
		if !math.IsInf(s.Max, 0) && math.Abs(s.Max) <= maxExact {
			out["maximum"] = s.Max
		}
		return out
	}
	switch s.Kind {
	case KindBoolean:
		return map[string]any{"type": "boolean"}
	case KindInteger:
		return bounded(map[string]any{"type": "integer"})
	case KindNumber:
		return bounded(map[string]any{"type": "number"})
	case KindDuration:
		return map[string]any{
			"description": "a duration with a unit, such as 100ms, 2s, 1.5m (a bare 0 needs none); at most 1000h",
			"anyOf":       []any{map[string]any{"type": "string", "pattern": durationPattern}, map[string]any{"const": 0}},
		}
	case KindDistribution:
		return map[string]any{
			"description": "a duration (100ms), or a distribution of them such as {exponential: 100ms} (docs/scenarios.md#distributions)",
			"anyOf": []any{map[string]any{"type": "string", "pattern": durationPattern}, map[string]any{"const": 0},
				map[string]any{"type": "object", "minProperties": 1, "maxProperties": 1}},
		}
	}
	return map[string]any{"type": "string"}
}
