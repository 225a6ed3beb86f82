// Package playground is the engine side of 'retrysim playground', the
// browser page that runs retrysim compiled to WebAssembly: it runs a
// request (a scenario file, a scenario, seeds and sweep parameters) as
// 'retrysim compare' does, through package compare, and says which
// command reproduces it. Package playground/wasm exposes Call to the page;
// the page's files are in web/ (Files). Nothing here reads files or the
// clock: a request's output depends on the request alone.
package playground

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/retrysim/retrysim/compare"
	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/report/plot"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
)

// FileName names a pasted scenario file in messages and in the command
// that reproduces a request (Request.Command).
const FileName = "scenario.yaml"

// MaxSeeds bounds Request.Seeds, as the CLI bounds --seeds.
const MaxSeeds = 100_000

// A Request is what the page asks for: the arguments of one
// 'retrysim compare' command. Seed is a decimal string (a uint64 does not
// fit a JavaScript number); "" is the scenario's own seed.
type Request struct {
	// YAML is a scenario file; "" runs the built-in scenarios.
	YAML     string `json:"yaml,omitempty"`
	Scenario string `json:"scenario,omitempty"` // "" is the file's default
	Seed     string `json:"seed,omitempty"`
	Seeds    int    `json:"seeds,omitempty"` // 0 is 1
	// Params are sweep parameters set to one value each, NAME=VALUE.
	Params []string `json:"params,omitempty"`
	Vs     string   `json:"vs,omitempty"`
	Format string   `json:"format,omitempty"` // "" is the table
	// Plots asks for the figures of 'retrysim plot' too (PlotArgs).
	Plots bool `json:"plots,omitempty"`
}

// Args are the arguments of the 'retrysim compare' command that prints
// what Run returns for r, after the program's name: --file FileName when r
// has its own YAML (which the user saves under that name).
func (r *Request) Args() []string {
	args := append([]string{"compare"}, r.scenarioArgs()...)
	if r.Vs != "" {
		args = append(args, "--vs", r.Vs)
	}
	if r.Format != "" && r.Format != string(report.Table) {
		args = append(args, "--format", r.Format)
	}
	return args
}

// PlotDir is where the command of PlotArgs writes the figures.
const PlotDir = "plots"

// PlotArgs are the arguments of the 'retrysim plot' command that writes
// the SVG figures Run returns for r with Plots set, into PlotDir.
func (r *Request) PlotArgs() []string {
	return append([]string{"plot", "--plot-dir", PlotDir, "--plot-format", "svg"}, r.scenarioArgs()...)
}

// scenarioArgs are the flags that pick the scenario, its seeds and its
// parameters.
func (r *Request) scenarioArgs() []string {
	var args []string
	if r.YAML != "" {
		args = append(args, "--file", FileName)
	}
	if r.Scenario != "" {
		args = append(args, "--scenario", r.Scenario)
	}
	if r.Seed != "" {
		args = append(args, "--seed", r.Seed)
	}
	if r.Seeds > 1 {
		args = append(args, "--seeds", strconv.Itoa(r.Seeds))
	}
	for _, p := range r.Params {
		args = append(args, "--param", p)
	}
	return args
}

// Command is Args as a shell command line.
func (r *Request) Command() string { return commandLine(r.Args()) }

// PlotCommand is PlotArgs as a shell command line.
func (r *Request) PlotCommand() string { return commandLine(r.PlotArgs()) }

func commandLine(args []string) string {
	words := []string{"retrysim"}
	for _, a := range args {
		words = append(words, shellQuote(a))
	}
	return strings.Join(words, " ")
}

// Link is the address of the page at base (where 'retrysim playground'
// serves it, or its --out files are hosted) with r preloaded: r in the
// URL's fragment, as the page keeps its state there (app.js's readURL).
func Link(base string, r Request) string {
	var parts []string
	add := func(k, v string) { parts = append(parts, k+"="+url.QueryEscape(v)) }
	if r.YAML != "" {
		add("yaml", base64.RawURLEncoding.EncodeToString([]byte(r.YAML)))
	}
	if r.Scenario != "" {
		add("s", r.Scenario)
	}
	if r.Seed != "" {
		add("seed", r.Seed)
	}
	if r.Seeds > 1 {
		add("seeds", strconv.Itoa(r.Seeds))
	}
	for _, p := range r.Params {
		add("p", p)
	}
	if r.Vs != "" {
		add("vs", r.Vs)
	}
	if r.Format != "" {
		add("format", r.Format)
	}
	if r.Plots {
		add("plots", "1")
	}
	base, _, _ = strings.Cut(base, "#")
	return base + "#" + strings.Join(parts, "&")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	safe := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_=.,:/+@%", c)) {
			safe = false
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// parsed is the file parsed last, by its YAML: the page runs one file
// many times, and parsing is most of a small run's time. Runs do not
// change a file's scenarios (compare.Set changes copies).
var parsed struct {
	sync.Mutex
	yaml string
	file *scenarios.File
}

// file parses the request's scenario file, or returns the built-in one. A
// pasted file cannot name capacity traces on disk: the page has none.
func (r *Request) file() (*scenarios.File, error) {
	parsed.Lock()
	defer parsed.Unlock()
	if parsed.file != nil && parsed.yaml == r.YAML {
		return parsed.file, nil
	}
	var f *scenarios.File
	var err error
	if r.YAML == "" {
		f, err = scenarios.Builtin()
	} else {
		f, err = scenarios.ParseWith(FileName, []byte(r.YAML), ".", func(path string) ([]byte, error) {
			return nil, fmt.Errorf("%s: the playground reads no files; give the capacity trace inline", path)
		})
	}
	if err != nil {
		return nil, err
	}
	parsed.yaml, parsed.file = r.YAML, f
	return f, nil
}

// scenario is the request's scenario with its parameters set, and its
// first seed and number of seeds.
func (r *Request) scenario() (*scenarios.Scenario, uint64, int, error) {
	f, err := r.file()
	if err != nil {
		return nil, 0, 0, err
	}
	name := r.Scenario
	if name == "" {
		name = f.Default
	}
	s, err := f.Lookup(name)
	if err != nil {
		return nil, 0, 0, err
	}
	seed := s.Seed
	if r.Seed != "" {
		if seed, err = strconv.ParseUint(r.Seed, 10, 64); err != nil {
			return nil, 0, 0, fmt.Errorf("seed %q: want a whole number from 0 to %d", r.Seed, uint64(math.MaxUint64))
		}
	}
	k := max(r.Seeds, 1)
	if k > MaxSeeds {
		return nil, 0, 0, fmt.Errorf("seeds must be between 1 and %d, got %d", MaxSeeds, r.Seeds)
	}
	if seed > math.MaxUint64-uint64(k-1) {
		return nil, 0, 0, fmt.Errorf("seed %d with %d seeds runs past the largest seed", seed, k)
	}
	if s, err = compare.Set(s, r.Params); err != nil {
		return nil, 0, 0, fmt.Errorf("param %w", err)
	}
	return s, seed, k, nil
}

// Version is what the JSON report of the page records as the retrysim
// that wrote it (report.Origin): the page, whatever build it runs.
const Version = "retrysim playground"

// origin is what the JSON report of r records of s, the scenario with
// r's parameters set: as the command's, but written by Version.
func (r *Request) origin(s *scenarios.Scenario) *report.Origin {
	file := scenarios.BuiltinFile
	if r.YAML != "" {
		file = FileName
	}
	params, err := compare.Params(r.Params)
	if err != nil {
		params = r.Params // not reached: compare.Set read them
	}
	return report.NewOrigin(Version, file, params, s)
}

// A Result is what Run made of a request.
type Result struct {
	// Output is what the command prints on stdout.
	Output string `json:"output"`
	// Warnings are the multi-seed document's warnings (which the command
	// prints on stderr, but in JSON).
	Warnings []string `json:"warnings,omitempty"`
	// Command reproduces Output (Request.Command).
	Command string `json:"command"`
	// Figures are the figures of 'retrysim plot' as SVG, when the request
	// asked for them, and PlotCommand writes them (Request.PlotCommand).
	Figures     []Figure `json:"figures,omitempty"`
	PlotCommand string   `json:"plot_command,omitempty"`
}

// A Figure is one of the plots, as the file Name+".svg" that
// 'retrysim plot --plot-format svg' writes.
type Figure struct {
	Name    string `json:"name"`
	Caption string `json:"caption"`
	SVG     string `json:"svg"`
}

// Run runs r as 'retrysim compare' runs r.Args(), and refuses what the
// command refuses without --force (the work estimate's limits). Errors
// are the command's messages for bad input.
func Run(ctx context.Context, r Request) (*Result, error) {
	s, seed, k, err := r.scenario()
	if err != nil {
		return nil, err
	}
	format := report.Format(r.Format)
	if format == "" {
		format = report.Table
	}
	if !slices.Contains(report.Formats(), format) {
		return nil, fmt.Errorf("unknown format %q (want one of %s)", format, report.FormatNames(report.Formats()))
	}
	ref := report.DefaultReference
	if r.Vs != "" {
		if ref, err = s.PolicyIndex(r.Vs); err != nil {
			return nil, fmt.Errorf("vs %q: %v", r.Vs, err)
		}
	}
	j := compare.Job{Scenario: s, Seed: seed, Seeds: k, Ref: ref, Origin: r.origin(s)}
	plan := runs.Plan{Groups: []runs.Group{j.Group()}}
	if r.Plots {
		// The group of 'retrysim plot', with its default bucket.
		plan.Groups = append(plan.Groups, runs.Group{Scenario: s, First: seed, Seeds: k, Plot: true, Bucket: runs.DefaultBucket(s.Server)})
	}
	if refusal := plan.Work().Refusal(); refusal != "" {
		return nil, fmt.Errorf("refusing to start: %s; the command runs it with --force", refusal)
	}
	var mode runs.Mode
	finish := func() {}
	if report, ok := ctx.Value(progressKey{}).(func(float64)); ok {
		mode.Context, finish = progressOf(plan, report)
	}
	res, err := runs.Execute(ctx, plan, mode)
	if err != nil {
		return nil, err
	}
	finish()
	var out strings.Builder
	warnings, err := j.Write(&out, format, &res.Groups[0])
	if err != nil {
		return nil, err
	}
	if format == report.JSON {
		warnings = nil // JSON carries them
	}
	result := &Result{Output: out.String(), Warnings: warnings, Command: r.Command()}
	if r.Plots {
		if result.Figures, err = figures(res.Groups[1].Plot); err != nil {
			return nil, err
		}
		result.PlotCommand = r.PlotCommand()
	}
	return result, nil
}

type progressKey struct{}

// WithProgress returns a copy of ctx with which Run reports how far its
// runs have got: report is told a fraction from 0 to 1 (of the engine
// events that the work estimate bounds, as the CLI's progress bar counts
// them), each time it has grown by a hundredth, and 1 when the runs have
// ended. report may be called from several goroutines, never at once.
func WithProgress(ctx context.Context, report func(fraction float64)) context.Context {
	return context.WithValue(ctx, progressKey{}, report)
}

// progressOf is the Mode.Context of plan's runs that tells report of
// their progress, and the function that reports the end. A run that ends
// below its bound counts the rest of it.
func progressOf(plan runs.Plan, report func(float64)) (func(context.Context, *runs.Group) context.Context, func()) {
	var mu sync.Mutex
	var done, total, told float64
	bounds := map[*scenarios.Scenario][]float64{}
	for _, gr := range plan.Groups {
		k := float64(gr.Seeds)
		if gr.Plot {
			k++ // the timeline's run
		}
		b := make([]float64, len(gr.Scenario.Policies))
		for p := range b {
			one := *gr.Scenario
			one.Policies = gr.Scenario.Policies[p : p+1]
			b[p] = runs.EstimateOf(&one, 1).Events
			total += k * b[p]
		}
		bounds[gr.Scenario] = b
	}
	add := func(n float64) {
		mu.Lock()
		defer mu.Unlock()
		done += n
		if f := min(done/max(total, 1), 1); f >= told+0.01 && f < 1 {
			told = f
			report(f)
		}
	}
	return func(ctx context.Context, g *runs.Group) context.Context {
			b := bounds[g.Scenario]
			return runs.WithProgress(ctx, &runs.Progress{
				Events: func(_, more int) { add(float64(more)) },
				Done:   func(p, events int) { add(max(b[p]-float64(events), 0)) },
			})
		}, func() {
			mu.Lock()
			defer mu.Unlock()
			told = 1
			report(1)
		}
}

// figures draws the figures of d as 'retrysim plot' draws them.
func figures(d *runs.PlotData) ([]Figure, error) {
	figs, err := plot.Figures(d)
	if err != nil {
		return nil, err
	}
	out := make([]Figure, len(figs))
	for i, f := range figs {
		var buf strings.Builder
		if err := f.Figure.Write(&buf, plot.SVG); err != nil {
			return nil, err
		}
		out[i] = Figure{Name: f.Name, Caption: f.Figure.Title, SVG: buf.String()}
	}
	return out, nil
}

// A Control is a sweep parameter (kinds.Params) that a scenario has: the
// page draws a field for it.
type Control struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	About string `json:"about"`
	// Unit is "count" or "duration" (values such as 500ms, 2s).
	Unit string `json:"unit"`
	// MinValue and MaxValue bound it, as the user writes them.
	MinValue string `json:"min"`
	MaxValue string `json:"max"`
}

// A Scenario is one the page can pick, with the controls it has.
type Scenario struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Policies    []string  `json:"policies"`
	Controls    []Control `json:"controls"`
}

// A Catalogue lists the scenarios of a file (Request.YAML, or the built-in
// file when it is "").
type Catalogue struct {
	Default   string     `json:"default"`
	Scenarios []Scenario `json:"scenarios"`
}

// List returns the scenarios of r's file, each with the sweep parameters
// that it has, in the registry's order: the page's controls come from the
// kinds, not from a list of its own.
func List(r Request) (*Catalogue, error) {
	f, err := r.file()
	if err != nil {
		return nil, err
	}
	c := &Catalogue{Default: f.Default}
	for _, s := range f.Scenarios {
		sc := Scenario{Name: s.Name, Description: s.Description, Controls: []Control{}}
		for i := range s.Policies {
			sc.Policies = append(sc.Policies, s.Policies[i].Name)
		}
		for _, p := range kinds.Params() {
			if !has(s, p) {
				continue
			}
			unit := "count"
			if p.Unit == kinds.Duration {
				unit = "duration"
			}
			sc.Controls = append(sc.Controls, Control{Name: p.Name, Title: p.Title, About: p.About, Unit: unit,
				MinValue: p.Format(p.Min), MaxValue: p.Format(p.Max)})
		}
		c.Scenarios = append(c.Scenarios, sc)
	}
	return c, nil
}

// has reports whether some part of s has parameter p: setting it (on a
// copy) to a value in its range succeeds.
func has(s *scenarios.Scenario, p *kinds.Param) bool {
	for _, v := range []int64{p.Min, max(p.Min, 1)} {
		if s.Clone().Set(p, v) == nil {
			return true
		}
	}
	return false
}

// Call is the page's one entry point: method and its JSON argument in,
// a JSON answer out, {"error": ...} on failure. Methods: "run" (a Request;
// a Result), "list" (a Request, of which only YAML counts; a Catalogue),
// "show" (a built-in scenario's name as a JSON string; its YAML as
// 'retrysim show' prints it).
func Call(ctx context.Context, method, arg string) string {
	var answer any
	var err error
	switch method {
	case "run", "list":
		var r Request
		if err = json.Unmarshal([]byte(arg), &r); err != nil {
			err = fmt.Errorf("bad request: %v", err)
			break
		}
		if method == "run" {
			answer, err = Run(ctx, r)
		} else {
			answer, err = List(r)
		}
	case "show":
		var name string
		if err = json.Unmarshal([]byte(arg), &name); err == nil {
			var yaml []byte
			if yaml, err = scenarios.ShowBuiltin(name); err == nil {
				answer = map[string]string{"yaml": string(yaml)}
			}
		}
	default:
		err = errors.New("unknown method " + strconv.Quote(method))
	}
	if err != nil {
		answer = map[string]string{"error": err.Error()}
	}
	b, err := json.Marshal(answer)
	if err != nil {
		return `{"error":"cannot encode the answer"}`
	}
	return string(b)
}
