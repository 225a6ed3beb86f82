package serve

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteComparisons writes the comparisons as a table, one block of rows per
// policy (metric, simulated, measured, difference, tolerance, verdict) and
// a line with the policy's verdict.
func WriteComparisons(w io.Writer, cs []Comparison) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tmetric\tsimulated\tmeasured\tdifference\ttolerance\tverdict\t")
	for _, c := range cs {
		name := c.Policy
		for _, ch := range c.Checks {
			verdict := "ok"
			if !ch.Agree {
				verdict = "DIFFERS"
			}
			ms := strings.HasSuffix(ch.Metric, "_ms") || strings.HasPrefix(ch.Metric, "latency_ms.")
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t±%s\t%s\t\n", name, ch.Metric, num(ch.Simulated, ms), num(ch.Measured, ms),
				signed(ch.Measured-ch.Simulated, ms), num(ch.Tolerance, ms), verdict)
			name = ""
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range cs {
		kind := "deterministic"
		if c.Randomised {
			kind = "randomised"
		}
		verdict := "agrees"
		if !c.Agree() {
			verdict = "DISAGREES"
		}
		if _, err := fmt.Fprintf(w, "%s: %s (%s policy; real run %.1fs)\n", c.Policy, verdict, kind, c.RealTime.Seconds()); err != nil {
			return err
		}
	}
	return nil
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
