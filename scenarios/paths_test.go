package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/schema"
)

// fieldValue is the value of the field at path as the loader read it for
// s, as the file writes it; "" when the file does not give it.
func fieldValue(s *Scenario, path string) (schema.Scalar, bool) {
	for _, f := range s.Fields() {
		if f.Path == path {
			return f, true
		}
	}
	return schema.Scalar{}, false
}

// candidates are values near v for a field of the kind, other than v:
// one of them should be one the loader takes.
func candidates(f schema.Scalar) []string {
	v := f.Node.Value
	var out []string
	add := func(x float64, format func(float64) string) {
		if x >= f.Min && x <= f.Max {
			if s := format(x); s != v {
				out = append(out, s)
			}
		}
	}
	switch f.Kind {
	case schema.KindInteger:
		n, _ := strconv.ParseFloat(v, 64)
		for _, x := range []float64{n + 1, n - 1, n * 2, n + 10} {
			add(x, func(x float64) string { return strconv.FormatFloat(x, 'f', 0, 64) })
		}
	case schema.KindNumber:
		n, _ := strconv.ParseFloat(v, 64)
		for _, x := range []float64{n * 0.9, n * 1.1, n / 2, n + 0.01, n - 0.01, n + 1} {
			add(x, func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) })
		}
	case schema.KindDuration:
		d, err := time.ParseDuration(v)
		if v == "0" || err != nil {
			d = 0
		}
		for _, x := range []time.Duration{d * 2, d / 2, d + time.Millisecond, d - time.Millisecond, d + time.Second} {
			add(float64(x), func(x float64) string { return time.Duration(x).String() })
		}
	}
	return out
}

// Every number, duration and probability field that a built-in scenario
// gives can be set by its path: some other value lands (the loader, asked
// again, reads it there), and a value out of the loader's bounds is
// refused with the loader's message, naming the path.
func TestEveryNumericFieldIsSettableByPath(t *testing.T) {
	f, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	fields := 0
	for _, s := range f.Scenarios {
		for _, fl := range s.Fields() {
			if fl.Node == nil || !fl.Kind.Numeric() {
				continue
			}
			fields++
			landed := false
			var last error
			for _, value := range candidates(fl) {
				c, err := s.WithValue(fl.Path, value)
				if err != nil {
					last = err
					continue
				}
				got, ok := fieldValue(c, fl.Path)
				if !ok || got.Node == nil || got.Node.Value != value {
					t.Errorf("%s: %s=%s: the loader reads %v", s.Name, fl.Path, value, got.Node)
				}
				if was, _ := fieldValue(s, fl.Path); was.Node.Value != fl.Node.Value {
					t.Errorf("%s: %s=%s changed the scenario it was set on", s.Name, fl.Path, value)
				}
				landed = true
				break
			}
			if !landed {
				t.Errorf("%s: %s (%s): no value near it lands; last: %v", s.Name, fl.Path, fl.Node.Value, last)
			}
			bad, rule := "-1s", "must not be negative"
			switch {
			case fl.Kind == schema.KindDuration:
			case fl.Max >= math.MaxUint64: // Unsigned
				rule = "want a whole number from 0"
			case fl.Max < math.MaxInt32*4:
				bad, rule = strconv.FormatFloat(fl.Max+1, 'f', -1, 64), "must be between"
			default:
				bad, rule = strconv.FormatFloat(fl.Min-1, 'f', -1, 64), "must be between"
			}
			if _, err := s.WithValue(fl.Path, bad); err == nil || !strings.Contains(err.Error(), fl.Path+": "+rule) {
				t.Errorf("%s: %s=%s: err %v, want %q", s.Name, fl.Path, bad, err, fl.Path+": "+rule)
			}
		}
	}
	if fields < 100 {
		t.Errorf("only %d numeric fields in the built-in scenarios", fields)
	}
	t.Logf("%d numeric fields of %d scenarios", fields, len(f.Scenarios))
}

// A path names list items by index or by name, adds a field the file
// leaves out, and says what is wrong with a path that leads nowhere.
func TestWithValuePaths(t *testing.T) {
	f, err := Parse("x.yaml", []byte(`scenarios:
  - name: s
    server:
      phases:
        - {duration: 2s, admit: 0}
        - {admit: 6, window: 1s}
    clients: {count: 5, max_attempts: 3}
    policies:
      - {name: a, type: full-jitter}
      - {name: b, type: capped-exponential, cap: 4s}
`))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenarios[0]
	c, err := s.WithValue("policies[a].cap", "30s")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := fieldValue(c, "policies[0].cap"); got.Node == nil || got.Node.Value != "30s" {
		t.Errorf("policies[a].cap=30s: the loader reads %v", got.Node)
	}
	if c, err = c.WithValue("server.phases[0].duration", "2m"); err != nil {
		t.Fatal(err)
	}
	if got, _ := fieldValue(c, "policies[0].cap"); got.Node == nil || got.Node.Value != "30s" {
		t.Error("a second path undid the first")
	}
	for _, tc := range []struct{ path, value, want string }{
		{"policies[c].cap", "1s", `no item named "c" (have: a, b)`},
		{"server.phases[2].duration", "1s", "no item 2 (the list has 2, from 0)"},
		{"policies[b].cpa", "1s", "policies[1].cpa: unknown field"},
		{"server.phases", "1s", "not a single value"},
		{"policies[b].cap", "1", `policies[1].cap: want a duration with a unit`},
		{"server.phases[0].admit", "-1", "server.phases[0].admit: must be between 0 and"},
	} {
		if _, err := s.WithValue(tc.path, tc.value); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%s: err %v, want %q", tc.path, tc.value, err, tc.want)
		}
	}
	if _, err := (&Scenario{}).WithValue("server.x", "1"); err == nil {
		t.Error(fmt.Sprint("a scenario built in Go took a path"))
	}
}
