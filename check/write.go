package check

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"

	"github.com/retrysim/retrysim/report"
)

// Formats returns the formats WriteCheck accepts.
func Formats() []report.Format { return []report.Format{report.Table, report.Markdown} }

// Report is everything 'retrysim check' found: expectations measured
// and metrics compared with baselines, in a fixed order.
type Report struct {
	Checks   []Result
	Baseline []Change
	// Seeds are the metrics compared with multi-seed baselines, and
	// Family how they were tested, as one family.
	Seeds  []SeedChange
	Family Family
	// Warnings are non-fatal problems, such as a baseline with too few
	// seeds to see a change.
	Warnings []string
	// Notes say how baselines were run: with the --param values they were
	// recorded with, against another file with the same scenario.
	Notes []string
}

// Failures counts failed expectations and baseline metrics.
func (r *Report) Failures() (expectations, baseline int) {
	for i := range r.Checks {
		if !r.Checks[i].Pass {
			expectations++
		}
	}
	for i := range r.Baseline {
		if r.Baseline[i].Fail {
			baseline++
		}
	}
	for i := range r.Seeds {
		if r.Seeds[i].Fail {
			baseline++
		}
	}
	return expectations, baseline
}

func passText(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAIL"
}

// WriteCheck renders r as a table or markdown (for a pull-request comment).
// Expectations come first, each with its measured value; then every baseline
// metric that changed or failed; then a summary line.
func WriteCheck(w io.Writer, format report.Format, r *Report) error {
	markdown := false
	switch format {
	case report.Table:
	case report.Markdown:
		markdown = true
	default:
		return fmt.Errorf("unknown format %q (want one of %s)", format, report.FormatNames(Formats()))
	}
	heading := func(s string) {
		if markdown {
			fmt.Fprintf(w, "### %s\n\n", s)
		} else {
			fmt.Fprintf(w, "%s\n", s)
		}
	}
	gap := func() { fmt.Fprintln(w) }
	if len(r.Checks) > 0 {
		heading("Expectations")
		rows := make([][]string, len(r.Checks))
		for i := range r.Checks {
			c := &r.Checks[i]
			rows[i] = []string{passText(c.Pass), c.Scenario, c.Policy, c.Expectation.String(), c.MeasuredText(), c.RunsText(), c.Source}
		}
		if err := report.WriteTable(w, markdown, []string{"result", "scenario", "policy", "expectation", "measured", "runs", "source"}, rows, textExcept(7, 4)); err != nil {
			return err
		}
		gap()
	}
	if len(r.Baseline) > 0 {
		heading("Baseline comparison")
		var rows [][]string
		unchanged := 0
		for i := range r.Baseline {
			c := &r.Baseline[i]
			if !c.Fail && !c.Changed() && c.NotComparable == "" {
				unchanged++
				continue
			}
			result := "better"
			switch {
			case c.Fail:
				result = "FAIL"
			case c.Worse:
				result = "worse (within tolerance)"
			case c.NotComparable != "":
				result = "not comparable"
			}
			metric := c.Metric
			if metric == "" {
				metric = "(policy missing)"
			}
			rows = append(rows, []string{result, c.Scenario, c.Policy, metric, c.BaseText(), c.NowText(), c.DeltaText()})
		}
		if len(rows) > 0 {
			if err := report.WriteTable(w, markdown, []string{"result", "scenario", "policy", "metric", "baseline", "now", "change"}, rows, textExcept(7, 4, 5, 6)); err != nil {
				return err
			}
		}
		fmt.Fprintf(w, "%d of %d baseline metrics unchanged.\n", unchanged, len(r.Baseline))
		gap()
	}
	if len(r.Seeds) > 0 {
		heading("Baseline comparison over seeds")
		var rows [][]string
		unchanged := 0
		for i := range r.Seeds {
			c := &r.Seeds[i]
			if !c.Fail && c.Verdict == Unchanged {
				unchanged++
				continue
			}
			rows = append(rows, c.row())
		}
		if len(rows) > 0 {
			if err := report.WriteTable(w, markdown, SeedChangeHeader(), rows, textExcept(9, 4, 5, 6, 7)); err != nil {
				return err
			}
		}
		fmt.Fprintf(w, "%d of %d metrics show no significant change (paired by seed, signed-rank test; %s).\n", unchanged, len(r.Seeds), r.Family.Describe())
		gap()
	}
	if len(r.Notes) > 0 {
		heading("Notes")
		for _, s := range r.Notes {
			fmt.Fprintf(w, "- %s\n", s)
		}
		gap()
	}
	if len(r.Warnings) > 0 {
		heading("Warnings")
		for _, s := range r.Warnings {
			fmt.Fprintf(w, "- %s\n", s)
		}
		gap()
	}
	failedE, failedB := r.Failures()
	if failedE+failedB > 0 {
		heading("Failures")
		for i := range r.Checks {
			if c := &r.Checks[i]; !c.Pass {
				fmt.Fprintf(w, "- %s %s/%s: %s\n", c.Source, c.Scenario, c.Policy, c.Explain())
			}
		}
		for i := range r.Baseline {
			if c := &r.Baseline[i]; c.Fail {
				fmt.Fprintf(w, "- %s (seed %d) %s/%s: %s\n", c.BaselineFile, c.BaselineSeed, c.Scenario, c.Policy, c.Explain())
			}
		}
		for i := range r.Seeds {
			if c := &r.Seeds[i]; c.Fail {
				fmt.Fprintf(w, "- %s (%s) %s/%s: %s\n", c.File, c.SeedRange(), c.Scenario, c.Policy, c.Explain())
			}
		}
		gap()
	}
	fmt.Fprintf(w, "%d of %d expectations hold", len(r.Checks)-failedE, len(r.Checks))
	if n := len(r.Baseline) + len(r.Seeds); n > 0 {
		fmt.Fprintf(w, "; %d of %d baseline metrics worse beyond tolerance", failedB, n)
	}
	if failedE+failedB == 0 {
		fmt.Fprintln(w, ": PASS")
	} else {
		fmt.Fprintln(w, ": FAIL")
	}
	return nil
}

// JUnit XML, as Jenkins, GitLab and most CI systems read it.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	// Properties say how a multi-seed baseline's metrics were tested.
	Properties *junitProperties `xml:"properties"`
	Cases      []junitCase      `xml:"testcase"`
}

type junitProperties struct {
	Property []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes r as JUnit XML: one test suite per scenario's
// expectations and one per baseline file, one test case per expectation and
// per compared metric. No timings are written, so the file is deterministic.
func WriteJUnit(w io.Writer, r *Report) error {
	doc := junitSuites{Name: "retrysim check"}
	suite := func(name string) *junitSuite {
		for i := range doc.Suites {
			if doc.Suites[i].Name == name {
				return &doc.Suites[i]
			}
		}
		doc.Suites = append(doc.Suites, junitSuite{Name: name})
		return &doc.Suites[len(doc.Suites)-1]
	}
	add := func(s *junitSuite, c junitCase) {
		s.Tests++
		doc.Tests++
		if c.Failure != nil {
			s.Failures++
			doc.Failures++
		}
		s.Cases = append(s.Cases, c)
	}
	for i := range r.Checks {
		c := &r.Checks[i]
		jc := junitCase{
			Name:      c.Policy + ": " + c.Expectation.String(),
			Classname: "retrysim.expect." + c.Scenario,
			SystemOut: fmt.Sprintf("measured %s over %s (%s)", c.MeasuredText(), c.RunsText(), c.Source),
		}
		if !c.Pass {
			jc.Failure = &junitFailure{Message: c.Explain(), Type: "expectation", Text: c.Source + ": " + c.Explain()}
		}
		add(suite("expectations: "+c.Scenario), jc)
	}
	for i := range r.Baseline {
		c := &r.Baseline[i]
		name := c.Policy + ": " + c.Metric
		if c.Metric == "" {
			name = c.Policy
		}
		jc := junitCase{Name: name, Classname: "retrysim.baseline." + c.Scenario, SystemOut: c.Explain()}
		if c.Fail {
			jc.Failure = &junitFailure{Message: c.Explain(), Type: "baseline", Text: c.Explain()}
		}
		add(suite(fmt.Sprintf("baseline: %s (%s, seed %d)", c.BaselineFile, c.Scenario, c.BaselineSeed)), jc)
	}
	for i := range r.Seeds {
		c := &r.Seeds[i]
		name := c.Policy
		if c.Metric != nil {
			name += ": " + c.Metric.Name
		}
		jc := junitCase{Name: name, Classname: "retrysim.baseline." + c.Scenario, SystemOut: c.Explain()}
		if c.Fail {
			jc.Failure = &junitFailure{Message: c.Explain(), Type: "baseline", Text: c.Explain()}
		}
		st := suite(fmt.Sprintf("baseline: %s (%s, %s)", c.File, c.Scenario, c.SeedRange()))
		if st.Properties == nil {
			f := r.Family
			st.Properties = &junitProperties{Property: []junitProperty{
				{"alpha", formatAlpha(f.Alpha)}, {"correction", Correction},
				{"paired_tests", strconv.Itoa(f.Tests)}, {"distinct_tests", strconv.Itoa(f.Distinct)}, {"counted_tests", strconv.Itoa(f.Counted)},
			}}
		}
		add(st, jc)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// textExcept is the alignment of a table of n columns whose listed columns
// hold numbers (right) and the others text (left).
func textExcept(n int, numeric ...int) []bool {
	left := make([]bool, n)
	for i := range left {
		left[i] = true
	}
	for _, i := range numeric {
		left[i] = false
	}
	return left
}
