package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// terminal is a buffer that says it is a terminal of a given width.
type terminal struct {
	bytes.Buffer
	width int
}

func (t *terminal) Width() int { return t.width }

// A table wider than the terminal leaves columns out from the right, the
// deciding ones last, and says which; one whose first columns alone are
// too wide has its widest cells shortened; a plain writer gets it whole.
func TestWriteTableFits(t *testing.T) {
	header := []string{"policy", "clients", "completed", "server", "p99_ms", "sessions"}
	rows := [][]string{
		{"full-jitter", "20", "18", "rate_limited=700 key_idle_ms=146.9 key_utilisation=0.89", "1234.5", "completed=26 failed=24"},
		{"gated", "20", "20", "-", "99.0", "completed=50"},
	}
	left := TextColumns(len(header), 0, 3, 5)
	var plain bytes.Buffer
	if err := WriteTable(&plain, false, header, rows, left); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{60, 80} {
		term := &terminal{width: width}
		if err := WriteTable(term, false, header, rows, left); err != nil {
			t.Fatal(err)
		}
		out := term.String()
		for line := range strings.SplitSeq(out, "\n") {
			if utf8.RuneCountInString(line) > width {
				t.Errorf("%d columns: a line of %d: %q", width, utf8.RuneCountInString(line), line)
			}
		}
		if !strings.Contains(out, "| policy ") || !strings.Contains(out, "| completed ") || strings.Contains(out, "| server ") {
			t.Errorf("%d columns: want policy and completed kept, server (not deciding) left out:\n%s", width, out)
		}
		if !strings.Contains(out, "server") || !strings.Contains(out, "--wide shows all") {
			t.Errorf("%d columns: the note does not name what was left out:\n%s", width, out)
		}
	}
	// Two columns that do not fit 30 are shortened, not wrapped.
	term := &terminal{width: 30}
	long := [][]string{{"a-policy-with-a-very-long-name-indeed", "20"}}
	if err := WriteTable(term, false, []string{"policy", "clients"}, long, []bool{true}); err != nil {
		t.Fatal(err)
	}
	if out := term.String(); !strings.Contains(out, "…") || !strings.Contains(out, "shortened") {
		t.Errorf("not shortened:\n%s", out)
	}
	if strings.Contains(plain.String(), "--wide") || !strings.Contains(plain.String(), "key_utilisation=0.89") {
		t.Errorf("a plain writer did not get the whole table:\n%s", plain.String())
	}
}
