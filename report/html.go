package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/retrysim/retrysim/policies"
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
	Caption string
	SVG     template.HTML
}

type htmlPage struct {
	Title       string
	Scenario    string
	Description string
	Command     string
	Seeds       string
	Setup       []htmlTable
	Results     []htmlTable
	Notes       []string
	Figures     []htmlFigure
}

// SVGFigure is a figure drawn as SVG, for the HTML page.
type SVGFigure struct {
	Caption string
	SVG     []byte
}

// WriteHTML writes one self-contained HTML page for a design review: the
// scenario, its results as tables (single-seed, or statistics over seeds)
// and every figure as inline SVG (report/plot draws them). command is the
// command line shown as the way to make the page again. The same inputs
// give the same bytes.
func WriteHTML(w io.Writer, s *scenarios.Scenario, m *runs.MultiSeed, figures []SVGFigure, command string) error {
	page := htmlPage{
		Title:       "retrysim: " + s.Name,
		Scenario:    s.Name,
		Description: s.Description,
		Command:     command,
		Seeds:       seedWords(m),
		Setup:       []htmlTable{serverTable(s), policyTable(s)},
	}
	if m.Seeds() == 1 {
		header := Columns(m.Metrics)
		var rows [][]string
		for p := range m.Policies {
			rows = append(rows, Cells(firstRow(m, p), "–"))
		}
		numeric := textColumns(m.Metrics)
		for i := range numeric {
			numeric[i] = !numeric[i]
		}
		page.Results = append(page.Results, htmlTable{Caption: "Results, seed " + strconv.FormatUint(m.FirstSeed, 10), Header: header, Numeric: numeric, Rows: rows})
	} else {
		doc := Stats(m)
		page.Notes = []string{
			"n: seeds on which the metric exists (latencies need a completion). " +
				"Mean ± half-width of its 95% confidence interval (Student's t); median, p5 and p95 over the seeds.",
			fmt.Sprintf("vs %s: change of the mean, paired by seed, two-sided Wilcoxon signed-rank test; "+
				"~ means no significant difference at α = %.2f.", doc.Baseline, doc.Alpha),
		}
		for _, metric := range doc.HeadlineMetrics() {
			header := MultiSeedColumns(&doc)
			numeric := []bool{false, true, true, true, true, true, false}
			page.Results = append(page.Results, htmlTable{Caption: metric.Name + " (" + metric.Better.String() + ")",
				Header: header, Numeric: numeric, Rows: MultiSeedRows(&doc, metric, "–")})
		}
	}
	for _, f := range figures {
		page.Figures = append(page.Figures, htmlFigure{Caption: f.Caption, SVG: template.HTML(inlineSVG(string(f.SVG)))})
	}
	return htmlTemplate.Execute(w, page)
}

// firstRow is policy p's row on the first seed of m.
func firstRow(m *runs.MultiSeed, p int) PolicyResult {
	pr := PolicyResult{Policy: m.Policies[p], Clients: m.Clients, Metrics: m.Metrics, Values: make([]float64, len(m.Metrics))}
	for i, metric := range m.Metrics {
		pr.Values[i] = m.Series(p, metric)[0]
	}
	return pr
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
	t := htmlTable{
		Caption: fmt.Sprintf("Server (every response arrives %s after its request)", responseTime(s.Server)),
		Header:  []string{"phase", "from", "until", "admits", "rejects with"},
		Numeric: []bool{true, true, true, false, false},
	}
	start := time.Duration(0)
	for i, p := range s.Server.Phases {
		until := "forever"
		if i < len(s.Server.Phases)-1 {
			until = (start + p.Duration).String()
		}
		admits := "nothing"
		if p.Admit > 0 {
			admits = fmt.Sprintf("%d per %v window", p.Admit, p.Window)
		}
		rej := fmt.Sprintf("%d (%v)", p.Reject.Status, p.Reject.Class)
		if p.Reject.RetryAfter > 0 {
			rej += fmt.Sprintf(", retry-after %v", p.Reject.RetryAfter)
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(i + 1), start.String(), until, admits, rej})
		start += p.Duration
	}
	return t
}

func responseTime(s *sim.CapacityWindows) string {
	if f, ok := s.ResponseTime.(sim.Fixed); ok {
		return time.Duration(f).String()
	}
	return "a random time"
}

func policyTable(s *scenarios.Scenario) htmlTable {
	clients := fmt.Sprintf("%d clients, one operation each, starting at t = 0", s.Workload.Clients)
	if s.Workload.Spread > 0 {
		clients = fmt.Sprintf("%d clients, one operation each, starting uniformly over %v", s.Workload.Clients, s.Workload.Spread)
	}
	t := htmlTable{
		Caption: "Policies (" + clients + ")",
		Header:  []string{"policy", "backoff", "max attempts", "deadline", "coordination"},
		Numeric: []bool{false, false, true, true, false},
	}
	for _, p := range s.Policies {
		attempts, deadline := "–", "–"
		if p.Rules.MaxAttempts > 0 {
			attempts = strconv.Itoa(p.Rules.MaxAttempts)
		}
		if p.Rules.Deadline > 0 {
			deadline = p.Rules.Deadline.String()
		}
		var coord []string
		if p.Gate {
			coord = append(coord, "shared retry-after gate")
		}
		if th := p.Throttle; th != nil {
			c := fmt.Sprintf("throttle %d starts per %v", th.Count, th.Per)
			if th.MaxQueue > 0 {
				c += fmt.Sprintf(", queue ≤ %d", th.MaxQueue)
			}
			coord = append(coord, c)
		}
		if len(coord) == 0 {
			coord = append(coord, "none")
		}
		t.Rows = append(t.Rows, []string{p.Name, describeBackoff(p.Rules.Backoff), attempts, deadline, strings.Join(coord, "; ")})
	}
	return t
}

// describeBackoff writes a backoff's shape with its parameters.
func describeBackoff(b policies.Backoff) string {
	factor := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	switch b := b.(type) {
	case policies.Constant:
		return fmt.Sprintf("fixed %v", b.Wait)
	case policies.Exponential:
		return fmt.Sprintf("min(%v, %v·%s^n)", b.Cap, b.Base, factor(b.Factor))
	case policies.FullJitter:
		return fmt.Sprintf("full jitter: U(0, min(%v, %v·%s^n))", b.Cap, b.Base, factor(b.Factor))
	case policies.EqualJitter:
		return fmt.Sprintf("equal jitter over min(%v, %v·%s^n)", b.Cap, b.Base, factor(b.Factor))
	case policies.DecorrelatedJitter:
		return fmt.Sprintf("decorrelated jitter: min(%v, U(%v, 3·previous))", b.Cap, b.Base)
	case policies.SDKJitter:
		return fmt.Sprintf("SDK jitter: min(%v, %v·%s^n)·U(0.75, 1]", b.Cap, b.Base, factor(b.Factor))
	case nil:
		return "none"
	}
	return fmt.Sprintf("%T", b)
}
