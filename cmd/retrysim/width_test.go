package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/scenarios"
)

// terminalOf is a terminal of a given width, as a test tells the CLI it
// writes to one.
type terminalOf struct {
	bytes.Buffer
	width int
}

func (t *terminalOf) Width() int { return t.width }

// widestLine is the width of the longest line of s, and that line.
func widestLine(s string) (int, string) {
	n, at := 0, ""
	for line := range strings.SplitSeq(s, "\n") {
		if w := utf8.RuneCountInString(line); w > n {
			n, at = w, line
		}
	}
	return n, at
}

// tableHeader returns the first header row of the ASCII table in out.
func tableHeader(out string) []string {
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(line, "| ") {
			var cols []string
			for c := range strings.SplitSeq(strings.Trim(line, "| "), "|") {
				cols = append(cols, strings.TrimSpace(c))
			}
			return cols
		}
	}
	return nil
}

// compare on every built-in scenario fits an 80- and a 120-column
// terminal, naming what it left out; --wide on the terminal and a pipe
// keep every column, the same table byte for byte.
func TestCompareFitsTheTerminal(t *testing.T) {
	t.Parallel()
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Scenarios {
		if racetest.Enabled && s.Name != f.Default {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			cli := func(w *terminalOf, args ...string) string {
				t.Helper()
				var stderr bytes.Buffer
				args = append([]string{"retrysim", "compare", "--scenario", s.Name}, args...)
				if err := run(context.Background(), args, w, &stderr); err != nil {
					t.Fatalf("%v: %v\n%s", args, err, stderr.String())
				}
				return w.String()
			}
			pipe := runPipe(t, s.Name)
			all := tableHeader(pipe)
			if wide := cli(&terminalOf{width: 80}, "--wide"); wide != pipe {
				t.Errorf("--wide on an 80-column terminal differs from a pipe:\n%s\nwant\n%s", wide, pipe)
			}
			pipeWidth, _ := widestLine(pipe)
			for _, width := range []int{80, 120} {
				out := cli(&terminalOf{width: width})
				if n, line := widestLine(out); n > width {
					t.Errorf("%d columns: a line of %d:\n%s", width, n, line)
				}
				shown := tableHeader(out)
				if len(shown) < 2 || shown[0] != "policy" {
					t.Errorf("%d columns: header %q, want the policy first", width, shown)
				}
				if pipeWidth <= width && out != pipe {
					t.Errorf("%d columns: a table that fits changed:\n%s", width, out)
				}
				if len(shown) < len(all) {
					for _, col := range all {
						if !strings.Contains(strings.Join(shown, " "), col) && !strings.Contains(strings.ReplaceAll(out, "\n", " "), col) {
							t.Errorf("%d columns: %s neither shown nor named as left out:\n%s", width, col, out)
						}
					}
					if !strings.Contains(strings.ReplaceAll(out, "\n", " "), "--wide shows all") {
						t.Errorf("%d columns: no word of --wide:\n%s", width, out)
					}
				}
			}
		})
	}
}

// runPipe runs compare on scenario writing to a plain buffer (a pipe).
func runPipe(t *testing.T, scenario string) string {
	t.Helper()
	stdout, stderr, code, err := runCLI(t, "compare", "--scenario", scenario)
	if err != nil || code != 0 {
		t.Fatalf("compare --scenario %s: exit %d, %v\n%s", scenario, code, err, stderr)
	}
	return stdout
}

// 'retrysim list' names every kind: the registered categories, the
// distributions, the stream faults and the rules (the watchdog's too).
func TestListNamesEveryKind(t *testing.T) {
	stdout, stderr, code, err := runCLI(t, "list")
	if err != nil || code != 0 {
		t.Fatalf("list: exit %d, %v\n%s", code, err, stderr)
	}
	var names []string
	for _, c := range []kinds.Category{kinds.Backoffs, kinds.Coordinators, kinds.Servers, kinds.Workloads} {
		for _, k := range kinds.Kinds(c) {
			names = append(names, k.Name)
		}
	}
	names = append(names, "fixed", "exponential", "lognormal", "normal", "uniform", "mixture",
		"stall_first_byte", "stall", "ping_only", "cut", "stream_idle_timeout", "stream_first_byte_timeout")
	for _, n := range names {
		if !strings.Contains(stdout, " "+n) {
			t.Errorf("list does not name %s", n)
		}
	}
}
