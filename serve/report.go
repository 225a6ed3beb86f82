package serve

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// WriteComparisons writes the comparisons as a table, one block of rows per
// policy (metric, simulated, measured, difference, tolerance, verdict), then
// a line per policy with its verdict.
func WriteComparisons(w io.Writer, cs []Comparison) error {
	rows := [][]string{{"policy", "metric", "simulated", "measured", "difference", "tolerance", "verdict"}}
	for _, c := range cs {
		name := c.Policy
		for _, ch := range c.Checks {
			verdict := "ok"
			if !ch.Agree {
				verdict = "DIFFERS"
			}
			ms := strings.HasSuffix(ch.Metric, "_ms") || strings.HasPrefix(ch.Metric, "latency_ms.")
			rows = append(rows, []string{name, ch.Metric, num(ch.Simulated, ms), num(ch.Measured, ms),
				signed(ch.Measured-ch.Simulated, ms), "±" + num(ch.Tolerance, ms), verdict})
			name = ""
		}
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, cell := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, cell := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			switch {
			case i < 2 || i == len(r)-1: // text: left-aligned
				b.WriteString(cell)
				if i < len(r)-1 {
					b.WriteString(pad + "  ")
				}
			default: // numbers: right-aligned
				b.WriteString(pad + cell + "  ")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	for _, c := range cs {
		kind := "deterministic"
		if c.Randomised {
			kind = "randomised"
		}
		verdict := "agrees"
		if !c.Agree() {
			verdict = "DISAGREES"
		}
		fmt.Fprintf(&b, "%s: %s (%s policy; real run %.1fs, clients late by %.1f ms at the median, %.1f ms at p99)\n", c.Policy, verdict, kind,
			c.RealTime.Seconds(), millis(lateQuantile(c.Lateness, 50)), millis(lateQuantile(c.Lateness, 99)))
		if !c.Agree() && c.RanLate() {
			fmt.Fprintf(&b, "  %s: the machine ran late (more than %v per attempt at the median): free some cores or lower --speed before blaming the model\n",
				c.Policy, LatencyFloor.Late)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func num(v float64, ms bool) string {
	if ms {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func signed(v float64, ms bool) string {
	s := strings.TrimPrefix(num(v, ms), "-")
	switch {
	case strings.Trim(s, "0.") == "":
		return s // rounds to zero: no sign
	case v > 0:
		return "+" + s
	}
	return "-" + s
}
