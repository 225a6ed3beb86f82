package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
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

// MaxFileSize bounds the size of a scenario file, in bytes. Scenario files
// are a few kilobytes; the bound keeps a wrong path (a log, a device) from
// being read into memory whole.
const MaxFileSize = 1 << 20

// MaxErrors is how many problems with a file are listed; beyond it, the
// error says how many more there are.
const MaxErrors = 20

// decoder walks a YAML node tree by hand, so that every error names the file,
// line and field, unknown fields are errors, and values are typed strictly.
// It keeps going after an error, lists the first MaxErrors problems and
// counts the rest.
//
// The tree is a tree: anchors and aliases are refused before decoding (see
// refuseAliases), so every node is decoded at most once and the work is
// bounded by the size of the file.
type decoder struct {
	file     string
	errs     []error // the first MaxErrors problems
	problems int     // all problems found, listed or not
	mappings int     // mappings decoded, for tests of the bound on work
}

func (d *decoder) errorf(n *yaml.Node, field, format string, args ...any) {
	e := &FieldError{File: d.file, Field: field, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	d.add(e)
}

// add records a problem.
func (d *decoder) add(e *FieldError) {
	d.problems++
	if len(d.errs) < MaxErrors {
		d.errs = append(d.errs, e)
	}
}

// err joins the problems listed, adding a count of those that are not.
func (d *decoder) err() error {
	errs := d.errs
	if more := d.problems - len(d.errs); more > 0 {
		noun := "problems"
		if more == 1 {
			noun = "problem"
		}
		errs = append(errs[:len(errs):len(errs)], &FieldError{File: d.file, Msg: fmt.Sprintf("and %d more %s", more, noun)})
	}
	return errors.Join(errs...)
}

// tooLarge is the error for a file over MaxFileSize.
func tooLarge(file string) *FieldError {
	return &FieldError{File: file, Msg: fmt.Sprintf("file is larger than %d MiB, the limit for a scenario file", MaxFileSize>>20)}
}

// readFile reads the file at path, but no more than MaxFileSize+1 bytes.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, tooLarge(path)
	}
	return data, nil
}

// parse decodes and validates data, recording every problem in d. It returns
// nil when the YAML itself cannot be read.
func (d *decoder) parse(data []byte) *File {
	doc := d.document(data)
	if doc == nil {
		return nil
	}
	return d.topLevel(doc)
}

// document parses data as a single YAML document and returns its root node,
// or nil after recording why it cannot.
func (d *decoder) document(data []byte) *yaml.Node {
	if len(data) > MaxFileSize {
		d.add(tooLarge(d.file))
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			d.add(&FieldError{File: d.file, Msg: "file is empty; it needs a list of scenarios"})
		} else {
			d.add(syntaxError(d.file, err))
		}
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		d.errorf(&extra, "", "only one YAML document is allowed")
		return nil
	} else if !errors.Is(err, io.EOF) {
		d.add(syntaxError(d.file, err))
		return nil
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if d.refuseAliases(doc); d.problems > 0 {
		return nil
	}
	return doc
}

// refuseAliases reports every anchor, alias and merge key under n. The
// loader does not support them: an alias may be walked once per place it
// is used, and aliases of aliases multiply, so a few kilobytes could expand
// into gigabytes of decoded values. Refusing them keeps the work linear in
// the size of the file, and a scenario file loses little by writing values
// out in full. The walk does not follow aliases, so it visits each node once.
func (d *decoder) refuseAliases(n *yaml.Node) {
	if n.Anchor != "" {
		d.errorf(n, "", "anchors (&%s) are not supported; write the value out in full", n.Anchor)
	}
	if n.Kind == yaml.AliasNode {
		d.errorf(n, "", "aliases (*%s) are not supported; write the value out in full", n.Value)
	}
	for i, c := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 0 && c.Kind == yaml.ScalarNode && c.Tag == "!!merge" {
			d.errorf(c, "", "merge keys (<<) are not supported; write the fields out in full")
		}
		d.refuseAliases(c)
	}
}

// resolve follows aliases. refuseAliases has refused them before decoding
// starts, so it has nothing to follow unless that check is taken away.
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
	d.mappings++
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
func syntaxError(file string, err error) *FieldError {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &FieldError{File: file, Line: line, Msg: "invalid YAML: " + msg[len(m[0]):]}
	}
	return &FieldError{File: file, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}
