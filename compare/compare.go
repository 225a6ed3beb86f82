// Package compare is what 'retrysim compare' does once its flags are read:
// the runs of one scenario on one seed or many, and the table (or JSON,
// CSV, markdown) of its policies. The CLI and the browser playground
// (package playground, compiled to WebAssembly) both call it, so the page
// shows what the command prints, byte for byte.
package compare

import (
	"fmt"
	"io"

	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sweep"
)

// A Job is the comparison of a scenario's policies on Seeds seeds from
// Seed, against policy Ref (an index, or report.DefaultReference).
type Job struct {
	Scenario *scenarios.Scenario
	Seed     uint64
	Seeds    int
	Ref      int
	// Origin, if set, is what the JSON report says produced it.
	Origin *report.Origin
}

// Group is the group of runs the job needs: every policy's whole result on
// one seed, or the metrics of every seed.
func (j Job) Group() runs.Group {
	return runs.Group{Scenario: j.Scenario, First: j.Seed, Seeds: j.Seeds, Whole: j.Seeds == 1}
}

// Write writes the results of the job's group in format and returns the
// warnings of a multi-seed document (which JSON carries inside it and the
// other formats leave to the caller).
func (j Job) Write(w io.Writer, format report.Format, g *runs.GroupResult) (warnings []string, err error) {
	if j.Seeds == 1 {
		cmp := report.Comparison{Scenario: j.Scenario.Name, Seed: j.Seed, Results: g.Whole, Metrics: j.Scenario.OneSeedMetrics(), Ref: j.Ref, Origin: j.Origin}
		return nil, report.Write(w, format, &cmp)
	}
	doc := report.StatsVs(g.Runs, j.Ref)
	doc.Origin = j.Origin
	return doc.Warnings, report.WriteMultiSeed(w, format, &doc)
}

// Set returns a copy of s with the parameters of specs set, each
// NAME=VALUE (one value of a sweep parameter, kinds.Params: clients=40,
// outage=5s), so that a comparison can be made at one point of a sweep
// without editing the file. s itself is not changed; no specs return s.
func Set(s *scenarios.Scenario, specs []string) (*scenarios.Scenario, error) {
	if len(specs) == 0 {
		return s, nil
	}
	ps, values, err := parseParams(specs)
	if err != nil {
		return nil, err
	}
	// Validate refuses a value as the loader would refuse it in the file.
	if err := sweep.Validate(s, ps); err != nil {
		return nil, err
	}
	return sweep.Apply(s, ps, values)
}

// Params returns specs as Set reads them, each NAME=VALUE with the value
// written as the sweep writes it (outage=5000ms is outage=5s), in the
// order given: what a report's origin records. Never nil.
func Params(specs []string) ([]string, error) {
	ps, _, err := parseParams(specs)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ps))
	for i := range ps {
		out[i] = ps[i].Name + "=" + ps[i].Label(0)
	}
	return out, nil
}

// parseParams reads specs, each one value of a parameter given once.
func parseParams(specs []string) ([]sweep.Param, []int64, error) {
	ps := make([]sweep.Param, len(specs))
	values := make([]int64, len(specs))
	for i, spec := range specs {
		p, err := sweep.Parse(spec)
		if err != nil {
			return nil, nil, err
		}
		if len(p.Values) != 1 {
			return nil, nil, fmt.Errorf("%q: compare takes one value per parameter (NAME=VALUE); 'retrysim sweep' varies it", spec)
		}
		for _, q := range ps[:i] {
			if q.Name == p.Name {
				return nil, nil, fmt.Errorf("%s is given twice", p.Name)
			}
		}
		ps[i], values[i] = p, p.Values[0]
	}
	return ps, values, nil
}
