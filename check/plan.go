package check

import (
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
)

// A Baseline is a report a check compares the runs of now with.
type Baseline struct {
	// File names the baseline in messages.
	File string
	// Doc is a single-seed baseline; Multi a multi-seed one.
	Doc   *report.Document
	Multi *SeedSet
	// Scenario is the baseline's scenario in the file checked, run on
	// Seeds seeds from First, as the baseline was.
	Scenario *scenarios.Scenario
	First    uint64
	Seeds    int
	// Notes and Warnings are what the check's report says of the
	// baseline's origin: the --param values it runs with, a change of
	// scenario accepted, an origin that cannot be verified.
	Notes, Warnings []string
}

// NewBaseline is the baseline doc or multi (one of them set), named file,
// against the scenario of the same name in f; the error is f.Lookup's.
func NewBaseline(file string, doc *report.Document, multi *SeedSet, f *scenarios.File) (Baseline, error) {
	b := Baseline{File: file, Doc: doc, Multi: multi}
	name := ""
	if doc != nil {
		name, b.First, b.Seeds = doc.Scenario, doc.Seed, 1
	} else {
		name, b.First, b.Seeds = multi.Scenario, multi.FirstSeed, multi.Seeds
	}
	var err error
	if b.Scenario, err = f.Lookup(name); err != nil {
		return Baseline{}, err
	}
	return b, nil
}

// Plan is the work of a check: the expectations of Scenarios, on Seeds(s,
// Seeds) seeds each, and the Baselines, with the tolerances of the metrics
// compared with them.
type Plan struct {
	Scenarios []*scenarios.Scenario
	// Seeds is the number of seeds of statistics over seeds; 0 for each
	// scenario's check_seeds.
	Seeds     int
	Baselines []Baseline
	// Tolerance is that of the metrics compared with baselines; without a
	// default, a multi-seed baseline's is DefaultTolerance.
	Tolerance Tolerances
	// Alpha is the family-wise false-alarm rate of the comparisons with
	// multi-seed baselines, all of them one family; 0 for DefaultAlpha.
	Alpha float64
}

// NewPlan is the plan of checking list on seeds (0: each scenario's own)
// and comparing with baselines, within tol.
func NewPlan(list []*scenarios.Scenario, seeds int, baselines []Baseline, tol Tolerances) *Plan {
	return &Plan{Scenarios: list, Seeds: seeds, Baselines: baselines, Tolerance: tol}
}

// Runs is the runs the check needs: one group per scenario (of no seeds
// for a scenario without expectations), then one per baseline, labelled
// "baseline FILE".
func (p *Plan) Runs() runs.Plan {
	var plan runs.Plan
	for _, s := range p.Scenarios {
		plan.Groups = append(plan.Groups, runs.Group{Scenario: s, First: s.Seed, Seeds: Seeds(s, p.Seeds)})
	}
	for _, b := range p.Baselines {
		plan.Groups = append(plan.Groups, runs.Group{Scenario: b.Scenario, First: b.First, Seeds: b.Seeds, Label: "baseline " + b.File})
	}
	return plan
}

// Empty reports whether the plan checks nothing: no expectations and no
// baseline.
func (p *Plan) Empty() bool {
	for _, gr := range p.Runs().Groups {
		if gr.Seeds > 0 {
			return false
		}
	}
	return true
}

// Report measures the expectations and compares the baselines on res,
// the results of Runs.
func (p *Plan) Report(res *runs.Results) *Report {
	rep := new(Report)
	for _, b := range p.Baselines {
		rep.Notes = append(rep.Notes, b.Notes...)
		rep.Warnings = append(rep.Warnings, b.Warnings...)
		if b.Multi != nil {
			rep.Warnings = append(rep.Warnings, PowerWarnings(b.File, b.Multi)...)
		}
	}
	for i, s := range p.Scenarios {
		if len(s.Expect) > 0 {
			rep.Checks = append(rep.Checks, Measure(s, res.Groups[i].Runs)...)
		}
	}
	for i, b := range p.Baselines {
		now := res.Groups[len(p.Scenarios)+i].Runs
		if b.Multi != nil {
			tol := p.Tolerance
			if !tol.DefaultSet {
				tol.Default = DefaultTolerance(b.Multi)
			}
			rep.Seeds = append(rep.Seeds, compareSeeds(b.File, b.Multi, FromMultiSeed(now), tol)...)
			continue
		}
		doc := document(now)
		rep.Baseline = append(rep.Baseline, CompareBaseline(b.File, b.Doc, &doc, p.Tolerance)...)
	}
	alpha := p.Alpha
	if alpha == 0 {
		alpha = DefaultAlpha
	}
	rep.Family = judge(rep.Seeds, alpha)
	return rep
}

// document is the single-seed report 'retrysim compare --format json'
// prints for the one seed of ms.
func document(ms *runs.MultiSeed) report.Document {
	doc := report.Document{Schema: report.SingleSeedSchema, Scenario: ms.Scenario, Seed: ms.FirstSeed}
	for p, name := range ms.Policies {
		row := report.PolicyResult{Policy: name, Clients: ms.Clients, Metrics: ms.Metrics}
		for _, m := range ms.Metrics {
			row.Values = append(row.Values, ms.Series(p, m)[0])
		}
		doc.Results = append(doc.Results, row)
	}
	return doc
}
