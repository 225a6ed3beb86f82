package scenarios

import (
	"errors"
	"strings"
	"testing"
)

// Syntax errors are reported where the YAML parser found them, with a
// column, not on the line (or the line before the line) where the enclosing
// construct began, which is what go.yaml.in/yaml/v3's messages say.
func TestSyntaxErrorPositions(t *testing.T) {
	for _, tt := range []struct{ name, old, new, want string }{
		{"tab as indentation", "      count: 20\n", "\tcount: 20\n",
			"x.yaml:10:1: invalid YAML: found character that cannot start any token"},
		// v3 says "line 2": the line before the one the description starts on.
		{"tab after a plain scalar", "  - name: s\n", "  - name: s\n    description: a b\n\tc\n",
			"x.yaml:4:1: invalid YAML: found a tab character that violates indentation (while scanning a plain scalar that starts at line 3, column 18)"},
		// v3 says "line 9", the line before the clients mapping.
		{"quote never closed", "      - name: immediate\n", "      - name: \"immediate\n",
			"x.yaml:14:15: invalid YAML: this quoted string is never closed (the file ends inside it)"},
		// v3 says "line 1".
		{"key indented too far", "      count: 20\n", "       count: 20\n",
			"x.yaml:11:7: invalid YAML: did not find expected key (while parsing a block mapping that starts at line 2, column 5)"},
		{"two keys on a line", "      count: 20\n", "      count: 20 x: 1\n",
			"x.yaml:10:18: invalid YAML: mapping values are not allowed in this context"},
		// v3 gives no line at all for a problem on line 1.
		{"problem on line 1", "scenarios:", "scenarios: foo: bar",
			"x.yaml:1:15: invalid YAML: mapping values are not allowed in this context"},
		// v3 gives no line for bytes that are not UTF-8.
		{"not UTF-8", "      count: 20\n", "      count: \xff\n",
			"x.yaml:10:14: invalid YAML: invalid leading UTF-8 octet"},
		{"list never closed", "          rate: 6\n", "          rate: [6\n",
			"x.yaml:18:1: invalid YAML: did not find expected ',' or ']' at the end of the file (while parsing a flow sequence that starts at line 17, column 17)"},
		{"in a second document", "          rate: 6\n", "          rate: 6\n---\nx: 'y\n",
			"x.yaml:19:4: invalid YAML: this quoted string is never closed (the file ends inside it)"},
		{"unknown anchor", "count: 20", "count: *twenty",
			"x.yaml:10:14: invalid YAML: unknown anchor 'twenty' referenced"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(valid, tt.old, tt.new, 1)
			if src == valid {
				t.Fatalf("%q not in the valid file", tt.old)
			}
			_, err := Parse("x.yaml", []byte(src))
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error\n  %v\nwant\n  %s", err, tt.want)
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Line == 0 || fe.Column == 0 {
				t.Fatalf("%+v does not carry a line and column", fe)
			}
		})
	}
}

// The end of a file with no final newline is on its last line.
func TestSyntaxErrorAtEndOfFileWithoutNewline(t *testing.T) {
	_, err := Parse("x.yaml", []byte("scenarios: ["))
	want := "x.yaml:1:13: invalid YAML: did not find expected node content at the end of the file"
	if err == nil || err.Error() != want {
		t.Fatalf("error\n  %v\nwant\n  %s", err, want)
	}
}

// A number too large for 64 bits is too large, not "not a whole number".
func TestHugeNumbersAreTooLarge(t *testing.T) {
	for _, tt := range []struct{ old, new, want string }{
		{"count: 20", "count: 99999999999999999999",
			"x.yaml:10:14: scenarios[0].clients.count: too large: must be between 1 and 100000000, got 99999999999999999999"},
		{"count: 20", "count: 9223372036854775808",
			"x.yaml:10:14: scenarios[0].clients.count: too large: must be between 1 and 100000000, got 9223372036854775808"},
		{"count: 20", "count: -99999999999999999999",
			"x.yaml:10:14: scenarios[0].clients.count: too small: must be between 1 and 100000000, got -99999999999999999999"},
		{"  - name: s\n", "  - name: s\n    seed: 99999999999999999999\n",
			"x.yaml:3:11: scenarios[0].seed: too large: must be at most 18446744073709551615, got 99999999999999999999"},
	} {
		_, err := Parse("x.yaml", []byte(strings.Replace(valid, tt.old, tt.new, 1)))
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: error\n  %v\nwant\n  %s", tt.new, err, tt.want)
		}
	}
}
