package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

//go:embed html_report.tmpl
var htmlTemplateText string

var htmlTemplate = template.Must(template.New("report").Parse(htmlTemplateText))

// htmlTable is a table as the template draws it.
type htmlTable struct {
	Caption string
	Header  []string
	// Numeric[i] right-aligns column i.
	Numeric []bool
	Rows    [][]string
}

type htmlFigure struct {
	Caption, HowToRead string
	SVG                template.HTML
}

type htmlPage struct {
	Title      string
	Command    string
	Version    string
	Playground string
	Sections   []htmlSection
}

// htmlSection is one scenario of a page.
type htmlSection struct {
	ID          string
	Scenario    string
	Description string
	Seeds       string
	Setup       []htmlTable
	Results     []htmlTable
	Notes       []string
	Figures     []htmlFigure
}

// SVGFigure is a figure drawn as SVG, for the HTML page.
type SVGFigure struct {
	Caption string
	// HowToRead, if set, says how to read the figure, under its caption.
	HowToRead string
	SVG       []byte
}

// Provenance says how a page was made: the command line that makes it
// again, and the retrysim that ran it ("retrysim v1.2.0, commit 1a2b3c").
type Provenance struct {
	Command, Version string
	// Playground, if set, is the address of the scenario in the browser
	// playground (playground.Link), which the page links to.
	Playground string
}

// HTMLScenario is one scenario of an HTML page: its runs, the reference
// policy of their comparisons (an index into Runs.Policies, or
// DefaultReference) and its figures.
type HTMLScenario struct {
	Scenario *scenarios.Scenario
	Runs     *runs.MultiSeed
	Ref      int
	Figures  []SVGFigure
}

// WriteHTML writes one self-contained HTML page for a design review: the
// scenario, its results as tables (single-seed, or statistics over seeds)
// and every figure as inline SVG (report/plot draws them). ref is the
// reference policy of the comparisons over seeds, an index into
// m.Policies or DefaultReference (see StatsVs). prov says how the page
// was made. The same inputs give the same bytes.
func WriteHTML(w io.Writer, s *scenarios.Scenario, m *runs.MultiSeed, ref int, figures []SVGFigure, prov Provenance) error {
	return WriteHTMLScenarios(w, []HTMLScenario{{Scenario: s, Runs: m, Ref: ref, Figures: figures}}, prov)
}

// WriteHTMLScenarios is WriteHTML for several scenarios on one page, each
// in its own section with its own summary, after a list of them.
func WriteHTMLScenarios(w io.Writer, list []HTMLScenario, prov Provenance) error {
	page := htmlPage{Command: prov.Command, Version: prov.Version, Playground: prov.Playground}
	var names []string
	for i, sc := range list {
		page.Sections = append(page.Sections, htmlSectionOf(fmt.Sprintf("scenario-%d", i+1), sc))
		names = append(names, sc.Scenario.Name)
	}
	page.Title = "retrysim: " + strings.Join(names, ", ")
	return htmlTemplate.Execute(w, page)
}

func htmlSectionOf(id string, sc HTMLScenario) htmlSection {
	s, m, ref, figures := sc.Scenario, sc.Runs, sc.Ref, sc.Figures
	page := htmlSection{
		ID:          id,
		Scenario:    s.Name,
		Description: s.Description,
		Seeds:       seedWords(m),
		Setup:       []htmlTable{serverTable(s), policyTable(s)},
	}
	doc := StatsVs(m, ref)
	header, rows := TradeCells(&doc, "–")
	caption := fmt.Sprintf("The trade, per policy: means per run over %s; p50 and p99 over completed operations only; the last column weighs each policy against %s on completions, attempts and the latencies where they are comparable", seedWords(m), doc.Baseline)
	numeric := []bool{false, true, true, false, true, true, false}
	if unit := tradeUnit(&doc); unit != "" {
		caption = fmt.Sprintf("The trade, per policy: %[1]s first, then the calls they cost; means per run over %[2]s; p50 and p99 over completed calls only; the last column weighs each policy against %[3]s on %[1]s completed, calls sent and the call latencies where they are comparable", unit, seedWords(m), doc.Baseline)
		numeric = []bool{false, true, false, true, true, false, true, true, false}
	}
	page.Results = append(page.Results, htmlTable{Caption: caption, Header: header, Numeric: numeric, Rows: rows})
	if m.Seeds() == 1 {
		set := TableMetrics(m.Metrics)
		header := Columns(set)
		var rows [][]string
		for p := range m.Policies {
			rows = append(rows, Cells(subRow(firstRow(m, p), set), "–"))
		}
		numeric := textColumns(set)
		for i := range numeric {
			numeric[i] = !numeric[i]
		}
		page.Results = append(page.Results, htmlTable{Caption: "Results, seed " + strconv.FormatUint(m.FirstSeed, 10), Header: header, Numeric: numeric, Rows: rows})
	} else {
		page.Notes = []string{
			"n: seeds on which the metric exists (latencies need a completion). " +
				"Mean ± half-width of its 95% confidence interval (Student's t); median, p5 and p95 over the seeds.",
			fmt.Sprintf("vs %s (the reference policy): change of the mean, paired by seed, two-sided Wilcoxon signed-rank test; "+
				"~ means no significant difference at α = %.2f.", doc.Baseline, doc.Alpha),
		}
		for _, w := range doc.Warnings {
			page.Notes = append(page.Notes, "Warning: "+w)
		}
		for _, metric := range doc.HeadlineMetrics() {
			header := MultiSeedColumns(&doc)
			numeric := []bool{false, true, true, true, true, true, false}
			page.Results = append(page.Results, htmlTable{Caption: MetricTitle(metric),
				Header: header, Numeric: numeric, Rows: MultiSeedRows(&doc, metric, "–")})
		}
	}
	for _, f := range figures {
		page.Figures = append(page.Figures, htmlFigure{Caption: f.Caption, HowToRead: f.HowToRead, SVG: template.HTML(inlineSVG(string(f.SVG)))})
	}
	return page
}

// firstRow is policy p's row on the first seed of m.
func firstRow(m *runs.MultiSeed, p int) PolicyResult {
	pr := PolicyResult{Policy: m.Policies[p], Clients: m.Clients, Metrics: m.Metrics, Values: make([]float64, len(m.Metrics))}
	for i, metric := range m.Metrics {
		pr.Values[i] = m.Series(p, metric)[0]
	}
	return pr
}

// subRow is pr with only the metrics of set (a subset of pr's, in order).
func subRow(pr PolicyResult, set []*metrics.Metric) PolicyResult {
	out := PolicyResult{Policy: pr.Policy, Clients: pr.Clients, Metrics: set}
	for _, m := range set {
		out.Values = append(out.Values, pr.Values[slices.Index(pr.Metrics, m)])
	}
	return out
}

// seedWords says which seeds m ran: "seed 1" or "seeds 1–100".
func seedWords(m *runs.MultiSeed) string {
	if k := m.Seeds(); k > 1 {
		return fmt.Sprintf("seeds %d–%d", m.FirstSeed, m.FirstSeed+uint64(k)-1)
	}
	return fmt.Sprintf("seed %d", m.FirstSeed)
}

// inlineSVG drops the XML prolog and comment so the SVG can sit inside HTML.
func inlineSVG(svg string) string {
	if i := strings.Index(svg, "<svg"); i >= 0 {
		svg = svg[i:]
	}
	return strings.Replace(svg, "<svg ", `<svg class="plot" role="img" `, 1)
}

func serverTable(s *scenarios.Scenario) htmlTable {
	t := kinds.DescribeServer(s.Server)
	caption := t.Caption
	if in := s.Incident; in != (sim.Incident{}) {
		caption += fmt.Sprintf("; incident from %v to %v (recovery is measured from its end)", in.Start, in.End)
	}
	return htmlTable{Caption: caption, Header: t.Header, Numeric: t.Numeric, Rows: t.Rows}
}

func policyTable(s *scenarios.Scenario) htmlTable {
	t := htmlTable{
		Caption: "Policies (" + kinds.DescribeWorkload(s.Workload) + ")",
		Header:  []string{"policy", "backoff", "max attempts", "deadline", "attempt timeout", "server waits", "coordination"},
		Numeric: []bool{false, false, true, true, true, false, false},
	}
	for _, p := range s.Policies {
		// The effective settings: "none" where a limit is off, so that an
		// empty cell never hides a default.
		attempts, deadline, timeout := "none", "none", "none (waits for the answer)"
		if p.Rules.MaxAttempts > 0 {
			attempts = strconv.Itoa(p.Rules.MaxAttempts)
		}
		if p.Rules.Deadline > 0 {
			deadline = p.Rules.Deadline.String()
		}
		if p.Rules.AttemptTimeout > 0 {
			timeout = p.Rules.AttemptTimeout.String()
		}
		t.Rows = append(t.Rows, []string{p.Name, kinds.DescribeBackoff(p.Rules.Backoff), attempts, deadline, timeout, serverWaits(&p), kinds.DescribeCoordination(&p)})
	}
	return t
}

// serverWaits describes how a policy treats a server's retry-after.
func serverWaits(p *sim.Policy) string {
	r := &p.Rules
	words := "honoured, uncapped"
	switch {
	case r.AtLeastBackoff:
		words = "a floor: max(backoff, server wait)"
	case r.IgnoreServerWaitAbove > 0 && r.IgnoreServerWaitAbove <= time.Nanosecond:
		// Every wait a server gives (whole milliseconds or seconds) is
		// ignored: the aws presets, whose retryer reads none.
		words = "not read: its own backoff sets every wait"
	case r.IgnoreServerWaitAbove > 0:
		words = "honoured up to " + r.IgnoreServerWaitAbove.String() + ", its own backoff above"
	case r.ClampServerWait > 0:
		words = "honoured, clamped to " + r.ClampServerWait.String()
	case r.FailServerWaitAbove > 0:
		words = "honoured up to " + r.FailServerWaitAbove.String() + ", gives up above"
	}
	if r.TotalServerWaitCap > 0 {
		words += "; gives up past " + r.TotalServerWaitCap.String() + " of server waits in all"
	}
	if r.ServerWaitJitter > 0 {
		words += fmt.Sprintf(", plus up to %v of jitter", r.ServerWaitJitter)
	}
	if r.NoCapacityRetries {
		words += "; no retries of capacity failures"
	}
	return words
}
