package scenarios

import (
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/retrysim/retrysim/schema"
)

// Expect is one expectation of a scenario file: a bound on a policy's metric
// that 'retrysim check' verifies, such as "completed >= 18" or
// "mean(amplification) <= 5". docs/ci.md describes the syntax.
type Expect struct {
	Expectation
	// Policy is the index in Scenario.Policies of the policy it applies to.
	Policy int
	// Text is the expectation as written.
	Text string
	// File, Line and Column say where it was written.
	File         string
	Line, Column int

	node  *yaml.Node
	field string
}

// Source is "file:line:column", for reports.
func (e *Expect) Source() string {
	return fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Column)
}

// expectations reads a policy's expect list: strings such as
// "completed >= 18".
func decodeExpectations(d *schema.Decoder, m *schema.Mapping) []Expect {
	var out []Expect
	for i, item := range m.Sequence("expect") {
		field := fmt.Sprintf("%s[%d]", m.Field("expect"), i)
		item = schema.Resolve(item)
		if item == nil || item.Kind != yaml.ScalarNode || item.Tag != "!!str" {
			got := "nothing"
			if item != nil {
				got = schema.Describe(item)
			}
			d.Errorf(item, field, "want an expectation such as \"completed >= 18\" or \"mean(amplification) <= 5\", got %s", got)
			continue
		}
		e, err := ParseExpectation(item.Value)
		if err != nil {
			var ee *ExpectationError
			if errors.As(err, &ee) {
				d.Errorf(item, field, "%s", ee.Msg)
			} else {
				d.Errorf(item, field, "%v", err)
			}
			continue
		}
		out = append(out, Expect{Expectation: e, Text: item.Value, File: d.File, Line: item.Line, Column: item.Column, node: item, field: field})
	}
	return out
}
