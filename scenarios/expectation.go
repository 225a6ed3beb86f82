package scenarios

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/retrysim/retrysim/internal/suggest"
	"github.com/retrysim/retrysim/metrics"
)

// Stat is the statistic an expectation takes over seeds; StatNone means the
// metric of a single run (the scenario's own seed).
type Stat string

const (
	StatNone   Stat = ""
	StatMean   Stat = "mean"
	StatMedian Stat = "median"
	StatP5     Stat = "p5"
	StatP95    Stat = "p95"
	StatMin    Stat = "min"
	StatMax    Stat = "max"
)

// Stats returns the statistics an expectation may take over seeds.
func Stats() []Stat { return []Stat{StatMean, StatMedian, StatP5, StatP95, StatMin, StatMax} }

// Op is a comparison operator of an expectation.
type Op string

// Ops returns the operators an expectation may use.
func Ops() []Op { return []Op{">=", "<=", ">", "<", "=="} }

// Holds reports whether "measured op bound" is true.
func (o Op) Holds(measured, bound float64) bool {
	switch o {
	case ">=":
		return measured >= bound
	case "<=":
		return measured <= bound
	case ">":
		return measured > bound
	case "<":
		return measured < bound
	default:
		return measured == bound
	}
}

// Expectation is one bound a policy's result must meet, such as
// "completed >= 18" (one run) or "mean(amplification) <= 5" (a statistic over
// seeds). Metric is the name of a metric of the registry (package
// metrics).
type Expectation struct {
	Stat   Stat
	Metric string
	Op     Op
	Value  float64
}

// String gives the expectation in the form ParseExpectation reads, with
// single spaces: the same text for the same expectation.
func (e Expectation) String() string {
	m := e.Metric
	if e.Stat != StatNone {
		m = string(e.Stat) + "(" + m + ")"
	}
	return m + " " + string(e.Op) + " " + strconv.FormatFloat(e.Value, 'f', -1, 64)
}

// OverSeeds reports whether the expectation is a statistic over seeds.
func (e Expectation) OverSeeds() bool { return e.Stat != StatNone }

var (
	// metric, or stat(metric); names are lower case with dots and underscores.
	exprSubject = regexp.MustCompile(`^(?:([a-z0-9]+)\(\s*([a-z0-9_.]+)\s*\)|([a-z0-9_.]+))$`)
	// a plain decimal number: no hex, no underscores, no Inf or NaN.
	exprNumber = regexp.MustCompile(`^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)
)

// ExpectationError says what is wrong with an expectation's text.
type ExpectationError struct{ Msg string }

func (e *ExpectationError) Error() string { return e.Msg }

func expErr(format string, args ...any) error {
	return &ExpectationError{Msg: fmt.Sprintf(format, args...)}
}

// ParseExpectation reads "METRIC OP NUMBER" or "STAT(METRIC) OP NUMBER", for
// example "completed >= 18", "latency_ms.p99 <= 12000" or
// "mean(completed) >= 17". Metric names are those of metrics.Names();
// statistics those of Stats; operators those of Ops. Spaces around parts are
// optional.
func ParseExpectation(text string) (Expectation, error) {
	var e Expectation
	s := strings.TrimSpace(text)
	if s == "" {
		return e, expErr("empty expectation; write e.g. \"completed >= 18\" or \"mean(amplification) <= 5\"")
	}
	// Find the operator: the first of < > = !.
	i := strings.IndexAny(s, "<>=!")
	if i < 0 {
		return e, expErr("no comparison in %q; use one of %s, e.g. \"completed >= 18\"", text, opNames())
	}
	j := i
	for j < len(s) && strings.IndexByte("<>=!", s[j]) >= 0 {
		j++
	}
	op := Op(s[i:j])
	if !knownOp(op) {
		return e, expErr("unknown operator %q in %q; use one of %s", string(op), text, opNames())
	}
	e.Op = op
	subject, number := strings.TrimSpace(s[:i]), strings.TrimSpace(s[j:])
	if subject == "" {
		return e, expErr("no metric before %q in %q", string(op), text)
	}
	m := exprSubject.FindStringSubmatch(subject)
	if m == nil {
		return e, expErr("cannot read %q as a metric or statistic(metric); write e.g. \"completed\" or \"mean(completed)\"", subject)
	}
	if m[3] != "" {
		e.Metric = m[3]
	} else {
		e.Stat, e.Metric = Stat(m[1]), m[2]
		if !knownStat(e.Stat) {
			return e, expErr("unknown statistic %q; use one of %s", m[1], statNames())
		}
	}
	if _, ok := metrics.Lookup(e.Metric); !ok {
		return e, expErr("unknown metric %q%s; known metrics: %s", e.Metric, suggest.DidYouMean(e.Metric, metrics.Names()), strings.Join(metrics.Names(), ", "))
	}
	if number == "" {
		return e, expErr("no number after %q in %q", string(op), text)
	}
	if !exprNumber.MatchString(number) {
		return e, expErr("cannot read %q as a number; write a plain decimal such as 18, 5.5 or 1e4", number)
	}
	v, err := strconv.ParseFloat(number, 64)
	if err != nil { // out of range
		return e, expErr("number %q is out of range", number)
	}
	e.Value = v
	return e, nil
}

func knownOp(op Op) bool {
	for _, o := range Ops() {
		if o == op {
			return true
		}
	}
	return false
}

func knownStat(s Stat) bool {
	for _, t := range Stats() {
		if t == s {
			return true
		}
	}
	return false
}

func opNames() string {
	names := make([]string, len(Ops()))
	for i, o := range Ops() {
		names[i] = string(o)
	}
	return strings.Join(names, " ")
}

func statNames() string {
	names := make([]string, len(Stats()))
	for i, s := range Stats() {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}
