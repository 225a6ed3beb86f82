// Package golden compares test output with files under testdata/ and, with
// "go test -update", rewrites them. On a mismatch it prints a line diff.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden files with the current output")

// Check compares got with testdata/name.golden.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run 'go test -update' to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run 'go test -update' to accept it):\n%s", path, Diff(string(want), string(got)))
	}
}

// maxCells bounds the work of the line diff; bigger inputs get a shorter
// report of the first difference.
const maxCells = 25_000_000

// Diff returns a line diff of want and got: "-" lines only in want, "+"
// lines only in got, with up to three lines of context, at most 60 lines.
func Diff(want, got string) string {
	a := splitLines(want)
	b := splitLines(got)
	if len(a)*len(b) > maxCells {
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				return fmt.Sprintf("first difference at line %d:\n-%s+%s", i+1, a[i], b[i])
			}
		}
		return fmt.Sprintf("want %d lines, got %d", len(a), len(b))
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:], b[j:].
	lcs := make([][]int32, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		text string
	}
	var lines []line
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			lines = append(lines, line{' ', a[i]})
			i++
			j++
		case j < len(b) && (i == len(a) || lcs[i][j+1] > lcs[i+1][j]):
			lines = append(lines, line{'+', b[j]})
			j++
		default:
			lines = append(lines, line{'-', a[i]})
			i++
		}
	}
	var out strings.Builder
	shown, last := 0, -1
	for k, l := range lines {
		near := false
		for d := max(0, k-3); d <= min(len(lines)-1, k+3); d++ {
			if lines[d].op != ' ' {
				near = true
				break
			}
		}
		if !near {
			continue
		}
		if shown == 60 {
			out.WriteString("…\n")
			break
		}
		if last >= 0 && k != last+1 {
			out.WriteString("@@\n")
		}
		text := l.text
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		out.WriteByte(l.op)
		out.WriteString(text)
		shown++
		last = k
	}
	return out.String()
}

// splitLines splits s after each newline, without an empty last element.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Updating reports whether the test run was asked to rewrite golden files.
func Updating() bool { return *update }
