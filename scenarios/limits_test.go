package scenarios

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/schema"
)

// aliasBomb is a small file whose aliases multiply: n scenarios share one
// list of n policies, each with the same list of n expectations. Walked
// through its aliases it holds n³ expectations; written out, 3n lines.
func aliasBomb(n int) string {
	var b strings.Builder
	b.WriteString("scenarios:\n")
	b.WriteString("  - &s\n    name: s0\n    server: {phases: [{admit: 1, window: 1s}]}\n    clients: {count: 1, deadline: 1s}\n    policies: &p\n")
	b.WriteString("      - &q\n        name: full-jitter\n        expect: &e\n")
	for range n {
		b.WriteString("          - completed >= 0\n")
	}
	for range n - 1 {
		b.WriteString("      - *q\n")
	}
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  - {name: s%d, server: {phases: [{admit: 1, window: 1s}]}, clients: {count: 1, deadline: 1s}, policies: *p}\n", i)
	}
	return b.String()
}

// Aliases are refused before any field is decoded, so a file whose aliases
// would expand to n³ values costs no more than its own size.
func TestAliasesAreRefusedBeforeDecoding(t *testing.T) {
	src := aliasBomb(60)
	if len(src) > 16<<10 {
		t.Fatalf("bomb is %d bytes; keep it small", len(src))
	}
	d := &schema.Decoder{File: "bomb.yaml"}
	f := decode(d, []byte(src))
	err := d.Err()
	if f != nil || err == nil {
		// A nil File: the schema refused the document, so no mapping was
		// decoded (schema's TestDocumentRefusesAliases counts them).
		t.Fatal("alias bomb accepted")
	}
	msg := err.Error()
	for _, want := range []string{
		"bomb.yaml:2:5: anchors (&s) are not supported",
		"bomb.yaml:6:15: anchors (&p) are not supported",
		"bomb.yaml:7:9: anchors (&q) are not supported",
		"bomb.yaml:9:17: anchors (&e) are not supported",
		"bomb.yaml:70:9: aliases (*q) are not supported",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not contain %q:\n%s", want, msg)
		}
	}
	// 4 anchors + 59 aliases of q + 59 of p: only the first schema.MaxErrors shown.
	lines := strings.Split(msg, "\n")
	if len(lines) != schema.MaxErrors+1 || lines[schema.MaxErrors] != fmt.Sprintf("bomb.yaml: and %d more problems", 4+59+59-schema.MaxErrors) {
		t.Errorf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}

func TestMergeKeysAreRefused(t *testing.T) {
	src := strings.Replace(valid, "      count: 20\n", "      <<: {count: 20}\n", 1)
	_, err := Parse("x.yaml", []byte(src))
	if err == nil || err.Error() != "x.yaml:10:7: merge keys (<<) are not supported; write the fields out in full" {
		t.Fatalf("err = %v", err)
	}
}

// Only the first schema.MaxErrors problems are listed; the rest are counted.
func TestErrorsAreCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString("scenarios: []\n")
	for i := range 50 {
		fmt.Fprintf(&b, "extra%d: 1\n", i)
	}
	_, err := Parse("x.yaml", []byte(b.String()))
	if err == nil {
		t.Fatal("accepted")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != schema.MaxErrors+1 {
		t.Fatalf("%d lines, want %d:\n%v", len(lines), schema.MaxErrors+1, err)
	}
	if !strings.HasPrefix(lines[0], "x.yaml:1:12: scenarios: the list is empty") {
		t.Errorf("first line %q", lines[0])
	}
	if want := fmt.Sprintf("x.yaml: and %d more problems", 51-schema.MaxErrors); lines[schema.MaxErrors] != want {
		t.Errorf("last line %q, want %q", lines[schema.MaxErrors], want)
	}
}

func TestFileSizeLimit(t *testing.T) {
	// A valid file padded with a comment to one byte over the limit.
	big := valid + "#" + strings.Repeat("x", MaxFileSize-len(valid)-1) + "\n"
	if len(big) != MaxFileSize+1 {
		t.Fatalf("built %d bytes", len(big))
	}
	want := "big.yaml: file is larger than 1 MiB, the limit for a scenario file"
	if _, err := Parse("big.yaml", []byte(big)); err == nil || err.Error() != want {
		t.Errorf("Parse: err = %v, want %q", err, want)
	}
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	var fe *FieldError
	if !errors.As(err, &fe) || err.Error() != strings.Replace(want, "big.yaml", path, 1) {
		t.Errorf("Load: err = %v", err)
	}
	// At the limit, the file loads.
	if _, err := Parse("big.yaml", []byte(big[:MaxFileSize-1]+"\n")); err != nil {
		t.Errorf("file of exactly the limit: %v", err)
	}
}

// max_attempts takes 0…2^31−1, and wherever it (or Policy.MaxAttempts,
// WithMaxAttempts) is documented, 0 is documented with the bound that
// machine.Op still applies: 2,147,483,647 attempts.
func TestMaxAttemptsBoundIsDocumented(t *testing.T) {
	const most = "2,147,483,647"
	if fmt.Sprint(math.MaxInt32) != strings.ReplaceAll(most, ",", "") {
		t.Fatalf("%s is not 2^31−1", most)
	}
	file := func(attempts string) string {
		return "scenarios:\n  - name: s\n    server: {phases: [{admit: 1, window: 1s}]}\n    clients: {count: 1, max_attempts: " + attempts + "}\n    policies: [{name: full-jitter, deadline: 1s}]\n"
	}
	if _, err := Parse("x.yaml", []byte(file("2147483647"))); err != nil {
		t.Errorf("max_attempts 2^31−1: %v", err)
	}
	if _, err := Parse("x.yaml", []byte(file("2147483648"))); err == nil || !strings.Contains(err.Error(), "must be between 0 and 2147483647") {
		t.Errorf("max_attempts 2^31: %v", err)
	}
	for _, doc := range []struct{ path, mention string }{
		{"../docs/scenarios.md", "| `max_attempts` |"},
		{"../docs/client.md", "| `WithMaxAttempts(n)` |"},
		{"../docs/policies.md", "`max_attempts: 0`"},
		{"../policies/machine/policy.go", "// MaxAttempts bounds"},
		{"../kinds/decode.go", "// Limits are"},
	} {
		data, err := os.ReadFile(doc.path)
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, para := range strings.Split(string(data), "\n\n") {
			for _, line := range strings.Split(para, "\n") {
				if !strings.Contains(line, doc.mention) {
					continue
				}
				found++
				text := strings.ReplaceAll(strings.ReplaceAll(para, "\n", " "), "// ", "")
				if strings.HasPrefix(line, "|") {
					text = line // a table row says it itself
				}
				if !strings.Contains(text, most) && !strings.Contains(text, "2^31−1 attempts") {
					t.Errorf("%s: %q says nothing of the bound of %s attempts", doc.path, line, most)
				}
			}
		}
		if found == 0 {
			t.Errorf("%s: no %q", doc.path, doc.mention)
		}
	}
}
