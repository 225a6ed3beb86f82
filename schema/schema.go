// Package schema is retrysim's strict YAML walker: a Decoder reads a YAML
// document node by node, so that every error names the file, line, column
// and field, unknown fields are errors, and values are typed strictly. It
// keeps going after an error, lists the first MaxErrors problems and
// counts the rest; anchors, aliases and merge keys are refused before
// anything is decoded, so the work is bounded by the size of the file.
//
// A Mapping records the fields a decoder reads from it: Finish reports any
// other field as unknown, listing those that were read, so the list of
// known fields is what the decoder reads, not a list typed beside it.
package schema

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/retrysim/retrysim/internal/suggest"
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

// Decoder walks a YAML node tree by hand, so that every error names the file,
// line and field, unknown fields are errors, and values are typed strictly.
// It keeps going after an error, lists the first MaxErrors problems and
// counts the rest.
//
// Anchors and aliases are refused before decoding (see refuseAliases), so
// the nodes form a plain tree, each is decoded at most once, and the work is
// bounded by the size of the file.
type Decoder struct {
	// File names the file in errors.
	File string
	// Dir is the folder that files a document names (capacity traces) are
	// read from; "" reads none.
	Dir string
	// Read reads such a file; nil is ReadFile.
	Read func(path string) ([]byte, error)
	// Scalars, if set, is told of every scalar field read (Scalar).
	Scalars func(Scalar)
	// Known, if set, is told of the fields a mapping knows, as Finish
	// lists them, with the mapping's path.
	Known    func(path string, fields []string)
	errs     []error // the first MaxErrors problems
	problems int     // all problems found, listed or not
	mappings int     // mappings decoded, for tests of the bound on work
}

func (d *Decoder) Errorf(n *yaml.Node, field, format string, args ...any) {
	e := &FieldError{File: d.File, Field: field, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	d.Add(e)
}

// Add records a problem.
func (d *Decoder) Add(e *FieldError) {
	d.problems++
	if len(d.errs) < MaxErrors {
		d.errs = append(d.errs, e)
	}
}

// Problems returns how many problems the decoder has found, listed or not.
func (d *Decoder) Problems() int { return d.problems }

// Err joins the problems listed, adding a count of those that are not.
func (d *Decoder) Err() error {
	errs := d.errs
	if more := d.problems - len(d.errs); more > 0 {
		noun := "problems"
		if more == 1 {
			noun = "problem"
		}
		errs = append(errs[:len(errs):len(errs)], &FieldError{File: d.File, Msg: fmt.Sprintf("and %d more %s", more, noun)})
	}
	return errors.Join(errs...)
}

// tooLarge is the error for a file over MaxFileSize.
func tooLarge(file string) *FieldError {
	return &FieldError{File: file, Msg: fmt.Sprintf("file is larger than %d MiB, the limit for a scenario file", MaxFileSize>>20)}
}

// ReadFile reads the file at path, as scenario files and capacity traces
// are read: no more than MaxFileSize+1 bytes, refusing a larger file.
func ReadFile(path string) ([]byte, error) {
	data, tooBig, err := ReadUpTo(path, MaxFileSize)
	if tooBig {
		return nil, tooLarge(path)
	}
	return data, err
}

// ReadUpTo reads the file at path, no more than limit+1 bytes; tooBig
// says it is larger than limit (and data is nil).
func ReadUpTo(path string, limit int64) (data []byte, tooBig bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(data)) > limit {
		return nil, true, nil
	}
	return data, false, nil
}

// Document parses data as a single YAML document and returns its root node,
// or nil after recording why it cannot.
func (d *Decoder) Document(data []byte) *yaml.Node {
	if len(data) > MaxFileSize {
		d.Add(tooLarge(d.File))
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			d.Add(&FieldError{File: d.File, Msg: "file is empty; it needs a list of scenarios"})
		} else {
			d.Add(syntaxError(d.File, data, dec, err))
		}
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		d.Errorf(&extra, "", "only one YAML document is allowed")
		return nil
	} else if !errors.Is(err, io.EOF) {
		d.Add(syntaxError(d.File, data, dec, err))
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
func (d *Decoder) refuseAliases(n *yaml.Node) {
	if n.Anchor != "" {
		d.Errorf(n, "", "anchors (&%s) are not supported; write the value out in full", n.Anchor)
	}
	if n.Kind == yaml.AliasNode {
		d.Errorf(n, "", "aliases (*%s) are not supported; write the value out in full", n.Value)
	}
	for i, c := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 0 && c.Kind == yaml.ScalarNode && c.Tag == "!!merge" {
			d.Errorf(c, "", "merge keys (<<) are not supported; write the fields out in full")
		}
		d.refuseAliases(c)
	}
}

// Resolve follows aliases. refuseAliases has refused them before decoding
// starts, so it has nothing to follow unless that check is taken away.
func Resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// Mapping is a YAML mapping being decoded field by field.
type Mapping struct {
	d      *Decoder
	node   *yaml.Node
	path   string
	values map[string]*yaml.Node
	keys   map[string]*yaml.Node
	order  []string // keys in file order, so errors come out in a fixed order
	used   map[string]bool
	read   []string // keys asked for, in the order first asked
}

// Mapping starts decoding n as a mapping at path; nil n gives an empty one.
func (d *Decoder) Mapping(n *yaml.Node, path string) *Mapping {
	d.mappings++
	m := &Mapping{d: d, node: n, path: path, values: map[string]*yaml.Node{}, keys: map[string]*yaml.Node{}, used: map[string]bool{}}
	n = Resolve(n)
	if n == nil || isNull(n) {
		return m
	}
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, path, "want a mapping of fields, got %s", Describe(n))
		return m
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.Errorf(k, path, "field names must be plain strings")
			continue
		}
		if _, dup := m.values[k.Value]; dup {
			d.Errorf(k, m.Field(k.Value), "field given twice")
			continue
		}
		m.keys[k.Value], m.values[k.Value] = k, v
		m.order = append(m.order, k.Value)
	}
	return m
}

// Decoder returns the decoder m belongs to.
func (m *Mapping) Decoder() *Decoder { return m.d }

// Node returns the mapping's node; nil for a mapping that is absent.
func (m *Mapping) Node() *yaml.Node { return m.node }

// Path returns the mapping's field path ("scenarios[0].server").
func (m *Mapping) Path() string { return m.path }

// Keys returns the mapping's keys in the order of the file.
func (m *Mapping) Keys() []string { return m.order }

// Read returns the keys asked for so far, present or not, in the order
// first asked.
func (m *Mapping) Read() []string { return m.read }

// Field returns the path of the field key of m.
func (m *Mapping) Field(key string) string {
	if m.path == "" {
		return key
	}
	return m.path + "." + key
}

// Get returns the value node of key, or nil when it is absent or null.
func (m *Mapping) Get(key string) *yaml.Node {
	if !m.used[key] {
		m.used[key] = true
		m.read = append(m.read, key)
	}
	v := Resolve(m.values[key])
	if v == nil || isNull(v) {
		return nil
	}
	return v
}

func (m *Mapping) Has(key string) bool { return m.Get(key) != nil }

// At returns the node to blame for a problem with key: its value if present,
// else the mapping itself.
func (m *Mapping) At(key string) *yaml.Node {
	if v := m.Get(key); v != nil {
		return v
	}
	return m.node
}

func (m *Mapping) Errorf(key, format string, args ...any) {
	m.d.Errorf(m.At(key), m.Field(key), format, args...)
}

// Finish reports fields that were never asked for, listing known as the
// known fields; with no known, those asked for (Read), in the order first
// asked.
func (m *Mapping) Finish(known ...string) {
	if len(known) == 0 {
		known = m.read
	}
	if m.d.Known != nil {
		m.d.Known(m.path, known)
	}
	for _, key := range m.order {
		if !m.used[key] {
			hint := ""
			if near := suggest.Closest(key, known); near != "" {
				hint = fmt.Sprintf("; did you mean %q?", near)
			}
			m.d.Errorf(m.keys[key], m.Field(key), "unknown field%s (known fields: %s)", hint, strings.Join(known, ", "))
		}
	}
}

func (m *Mapping) Scalar(key, want string) *yaml.Node {
	v := m.Get(key)
	if v == nil {
		return nil
	}
	if v.Kind != yaml.ScalarNode {
		m.d.Errorf(v, m.Field(key), "want %s, got %s", want, Describe(v))
		return nil
	}
	return v
}

func (m *Mapping) Str(key, def string) string {
	m.d.note(m.Field(key), KindString, noBounds[0], noBounds[1], m.value(key))
	v := m.Scalar(key, "a string")
	if v == nil {
		return def
	}
	if v.Tag != "!!str" {
		m.d.Errorf(v, m.Field(key), "want a string, got %s", Describe(v))
		return def
	}
	return v.Value
}

func (m *Mapping) Boolean(key string, def bool) bool {
	m.d.note(m.Field(key), KindBoolean, noBounds[0], noBounds[1], m.value(key))
	v := m.Scalar(key, "true or false")
	if v == nil {
		return def
	}
	if v.Tag != "!!bool" {
		m.d.Errorf(v, m.Field(key), "want true or false, got %s", Describe(v))
		return def
	}
	b, err := strconv.ParseBool(strings.ToLower(v.Value))
	if err != nil {
		m.d.Errorf(v, m.Field(key), "want true or false, got %q", v.Value)
		return def
	}
	return b
}

// Integer reads a whole number in [lo, hi].
func (m *Mapping) Integer(key string, def, lo, hi int64) int64 {
	m.d.note(m.Field(key), KindInteger, float64(lo), float64(hi), m.value(key))
	v := m.Scalar(key, "a whole number")
	if v == nil {
		return def
	}
	// Plain decimal only, as in expectations: no hex, no underscores. YAML
	// calls a decimal too long for 64 bits a float.
	if v.Tag != "!!int" && !(v.Tag == "!!float" && decimal.MatchString(v.Value)) {
		m.d.Errorf(v, m.Field(key), "want a whole number, got %s", Describe(v))
		return def
	}
	i, err := strconv.ParseInt(v.Value, 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		size := "large"
		if strings.HasPrefix(v.Value, "-") {
			size = "small"
		}
		m.d.Errorf(v, m.Field(key), "too %s: must be between %d and %d, got %s", size, lo, hi, v.Value)
		return def
	}
	if err != nil {
		m.d.Errorf(v, m.Field(key), "want a whole number between %d and %d, got %s", lo, hi, v.Value)
		return def
	}
	if i < lo || i > hi {
		m.d.Errorf(v, m.Field(key), "must be between %d and %d, got %d", lo, hi, i)
		return def
	}
	return i
}

// Unsigned reads a whole number in [0, 2^64).
func (m *Mapping) Unsigned(key string, def uint64) uint64 {
	m.d.note(m.Field(key), KindInteger, 0, math.MaxUint64, m.value(key))
	v := m.Scalar(key, "a whole number")
	if v == nil {
		return def
	}
	u, err := strconv.ParseUint(v.Value, 10, 64)
	if errors.Is(err, strconv.ErrRange) && (v.Tag == "!!int" || v.Tag == "!!float") {
		m.d.Errorf(v, m.Field(key), "too large: must be at most %d, got %s", uint64(math.MaxUint64), v.Value)
		return def
	}
	if v.Tag != "!!int" || err != nil {
		m.d.Errorf(v, m.Field(key), "want a whole number from 0 to %d, got %s", uint64(math.MaxUint64), Describe(v))
		return def
	}
	return u
}

// decimal matches a whole number written in plain decimal.
var decimal = regexp.MustCompile(`^[-+]?[0-9]+$`)

// Number reads a finite number in [lo, hi].
func (m *Mapping) Number(key string, def, lo, hi float64) float64 {
	m.d.note(m.Field(key), KindNumber, lo, hi, m.value(key))
	v := m.Scalar(key, "a number")
	if v == nil {
		return def
	}
	if v.Tag != "!!int" && v.Tag != "!!float" {
		m.d.Errorf(v, m.Field(key), "want a number, got %s", Describe(v))
		return def
	}
	f, err := strconv.ParseFloat(v.Value, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		m.d.Errorf(v, m.Field(key), "want a finite number, got %s", v.Value)
		return def
	}
	if f < lo || f > hi {
		m.d.Errorf(v, m.Field(key), "must be between %g and %g, got %g", lo, hi, f)
		return def
	}
	return f
}

// MaxDuration bounds every duration in a scenario: long enough for any
// experiment, short enough that sums of durations cannot overflow.
const MaxDuration = 1000 * time.Hour

// Duration reads a Go duration such as "1.5s" or "100ms", in [0, MaxDuration].
func (m *Mapping) Duration(key string, def time.Duration) time.Duration {
	m.d.note(m.Field(key), KindDuration, 0, 0, m.value(key))
	v := m.Scalar(key, "a duration")
	if v == nil {
		return def
	}
	return m.d.durationOf(v, m.Field(key), def)
}

// DurationOf reads the scalar v (at field) as duration would.
func (d *Decoder) DurationOf(v *yaml.Node, field string, def time.Duration) time.Duration {
	d.note(field, KindDuration, 0, 0, v)
	return d.durationOf(v, field, def)
}

func (d *Decoder) durationOf(v *yaml.Node, field string, def time.Duration) time.Duration {
	if v.Tag == "!!int" && strings.TrimLeft(v.Value, "+-0_") == "" {
		return 0 // a bare 0 needs no unit
	}
	if v.Tag != "!!str" {
		d.Errorf(v, field, "want a duration with a unit such as \"2s\" or \"100ms\", got %s", Describe(v))
		return def
	}
	dur, err := time.ParseDuration(v.Value)
	if err != nil {
		d.Errorf(v, field, "want a duration such as \"2s\" or \"100ms\", got %q", v.Value)
		return def
	}
	if dur < 0 {
		d.Errorf(v, field, "must not be negative, got %v", dur)
		return def
	}
	if dur > MaxDuration {
		d.Errorf(v, field, "must be at most %v, got %v", MaxDuration, dur)
		return def
	}
	return dur
}

// Sequence returns the items of the sequence at key; nil when absent.
func (m *Mapping) Sequence(key string) []*yaml.Node {
	v := m.Get(key)
	if v == nil {
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		m.d.Errorf(v, m.Field(key), "want a list, got %s", Describe(v))
		return nil
	}
	return v.Content
}

// DurationItem reads a list item as a duration; 0 after an error.
func (d *Decoder) DurationItem(n *yaml.Node, field string) time.Duration {
	n = Resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		got := "nothing"
		if n != nil {
			got = Describe(n)
		}
		d.Errorf(n, field, "want a duration, got %s", got)
		return 0
	}
	return d.DurationOf(n, field, 0)
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// Describe says what n is, for errors: "a mapping", "string \"x\"".
func Describe(n *yaml.Node) string {
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

// Syntax errors.
//
// go.yaml.in/yaml/v3 reports a syntax error as a plain error, "yaml: line N:
// problem", and that N is not where the problem is: it is the line where the
// enclosing construct began (the plain scalar a stray tab interrupts, the
// mapping a badly indented key leaves), one less than that for parser
// errors (a 0-based line printed as if 1-based), and missing altogether when
// it would be 0. There is no column. The parser itself knows better: libyaml,
// which it is a port of, keeps the problem's mark (line and column) and the
// context's mark in its state, where the decoder leaves them after failing.
// parserState reads them from there, read-only, through reflect; the field
// names are those of v3.0.6 (go.mod pins the version). If they change, it
// reports !ok and syntaxError falls back to the line in the message, and the
// tests of exact positions (TestSyntaxErrorPositions) fail.

// libyaml's error types (yaml_error_type_t), as v3 numbers them.
const (
	yamlNoError      = 0
	yamlReaderError  = 2
	yamlScannerError = 3
	yamlParserError  = 4
)

// yamlMark is a position in libyaml's terms: 0-based line and column, the
// column counted in characters as yaml.Node's is.
type yamlMark struct{ line, column int }

// parserState is what the decoder's parser recorded about its failure.
type parserState struct {
	kind          int      // one of the yaml*Error constants
	problem       string   // e.g. "did not find expected key"
	problemMark   yamlMark // where the problem is (scanner and parser errors)
	problemOffset int      // byte offset of the problem (reader errors)
	context       string   // e.g. "while parsing a block mapping"; may be empty
	contextMark   yamlMark // where that context began
	eventMark     yamlMark // start of the event being composed (other errors)
}

func readParserState(dec *yaml.Decoder) (st parserState, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false // a field is not of the kind expected
		}
	}()
	p := reflect.ValueOf(dec).Elem().FieldByName("parser")
	if !p.IsValid() || p.Kind() != reflect.Pointer || p.IsNil() {
		return st, false
	}
	p = p.Elem()
	y, ev := p.FieldByName("parser"), p.FieldByName("event")
	if !y.IsValid() || !ev.IsValid() {
		return st, false
	}
	field := func(v reflect.Value, name string) reflect.Value {
		f := v.FieldByName(name)
		if !f.IsValid() {
			panic(name)
		}
		return f
	}
	mark := func(v reflect.Value, name string) yamlMark {
		m := field(v, name)
		return yamlMark{int(field(m, "line").Int()), int(field(m, "column").Int())}
	}
	st.kind = int(field(y, "error").Int())
	st.problem = field(y, "problem").String()
	st.problemMark = mark(y, "problem_mark")
	st.problemOffset = int(field(y, "problem_offset").Int())
	st.context = field(y, "context").String()
	st.contextMark = mark(y, "context_mark")
	st.eventMark = mark(ev, "start_mark")
	return st, true
}

var yamlLine = regexp.MustCompile(`^line (\d+): `)

// syntaxError turns an error of dec, which was reading data, into an error
// at the position where the parser found the problem.
func syntaxError(file string, data []byte, dec *yaml.Decoder, err error) *FieldError {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	e := &FieldError{File: file}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1]) // only a fallback: see above
		msg = msg[len(m[0]):]
	}
	st, ok := readParserState(dec)
	if !ok {
		e.Msg = "invalid YAML: " + msg
		return e
	}
	at := func(m yamlMark) { e.Line, e.Column = m.line+1, m.column+1 }
	switch st.kind {
	case yamlReaderError: // the bytes are not text: "invalid leading UTF-8 octet"
		e.Line, e.Column = offsetPosition(data, st.problemOffset)
		e.Msg = "invalid YAML: " + st.problem
	case yamlScannerError, yamlParserError:
		end := endMark(data)
		switch {
		case st.context == "while scanning a quoted scalar" && st.problem == "found unexpected end of stream":
			// Where the file ends says nothing; where the string
			// that is never closed begins does.
			at(st.contextMark)
			e.Msg = "invalid YAML: this quoted string is never closed (the file ends inside it)"
		case st.context != "" && st.problem == "found unexpected end of stream":
			at(st.contextMark)
			e.Msg = fmt.Sprintf("invalid YAML: the file ends %s that starts here", st.context)
		default:
			pos, where := st.problemMark, ""
			if !pos.before(end) {
				// libyaml puts the end of the stream on a line of its
				// own, which may be past the last line there is.
				pos, where = end, " at the end of the file"
			}
			at(pos)
			e.Msg = "invalid YAML: " + st.problem + where
			if st.context != "" && st.contextMark != st.problemMark {
				e.Msg += fmt.Sprintf(" (%s that starts at line %d, column %d)", st.context, st.contextMark.line+1, st.contextMark.column+1)
			}
		}
	default: // found while building the tree, e.g. an unknown anchor
		at(st.eventMark)
		e.Msg = "invalid YAML: " + msg
	}
	return e
}

func (m yamlMark) before(o yamlMark) bool {
	return m.line < o.line || m.line == o.line && m.column < o.column
}

// endMark is the position just after the last character of data.
func endMark(data []byte) yamlMark {
	line, column := offsetPosition(data, len(data))
	return yamlMark{line - 1, column - 1}
}

// offsetPosition gives the 1-based line and column (in characters) of the
// byte at offset in data.
func offsetPosition(data []byte, offset int) (line, column int) {
	offset = min(max(offset, 0), len(data))
	start := bytes.LastIndexByte(data[:offset], '\n') + 1
	return bytes.Count(data[:offset], []byte("\n")) + 1, utf8.RuneCount(data[start:offset]) + 1
}
