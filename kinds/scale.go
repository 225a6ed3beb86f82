package kinds

import (
	"fmt"
	"math"

	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/sim"
)

// Scaling a scenario down for the work estimate's pilot run
// (runs/predict.go): clients and every capacity shared by them (a server's
// admissions, workers, queue slots and rate limits; a shared coordinator's
// rates and slots) are multiplied by the same factor, so that each client
// sees about the load it sees at full size, and the pilot's events divided
// by the factor predict the full run's. Each kind says in its own file how
// it scales (the scale functions of its registration); a kind without one
// cannot be scaled, and the estimate falls back to its bound.

// Scale returns a copy of s with its clients and capacities multiplied by
// f (0 < f ≤ 1), or why s cannot be scaled.
func Scale(s Parts, f float64) (Parts, error) {
	if !(f > 0 && f <= 1) {
		return s, fmt.Errorf("scale factor %g is not in (0, 1]", f)
	}
	c := s.Clone()
	var err error
	if c.Server, err = scaleServer(c.Server, f); err != nil {
		return s, err
	}
	wk := workloadKindOf(c.Workload)
	if wk == nil || wk.scale == nil {
		return s, fmt.Errorf("the %s workload cannot be scaled", KindName(c.Workload))
	}
	if c.Workload, err = wk.scale(c.Workload, f); err != nil {
		return s, fmt.Errorf("%s workload: %w", KindName(c.Workload), err)
	}
	// With processes, every process has its coordinators to itself, and
	// the workload scaled the processes with the clients; a retry layer's
	// coordinators are one set per run whatever the processes.
	split, ok := c.Workload.(sim.ProcessSplit)
	perProcess := ok && split.ClientProcesses() > 1
	for i := range c.Policies {
		p := &c.Policies[i]
		if !perProcess {
			if err := scaleCoordinators(p, p.Name, f); err != nil {
				return s, err
			}
		}
		for j := range p.Layers {
			l := &p.Layers[j]
			inner := sim.Policy{Coordinators: l.Coordinators}
			if err := scaleCoordinators(&inner, p.Name+"/"+l.Name, f); err != nil {
				return s, err
			}
			l.Coordinators = inner.Coordinators
		}
	}
	return c, nil
}

// scaleCoordinators scales the coordinators of p (named name in errors).
func scaleCoordinators(p *sim.Policy, name string, f float64) error {
	for _, spec := range p.Coordinators {
		r := specRank(spec)
		if r == len(coordinatorKinds) || coordinatorKinds[r].scale == nil {
			return fmt.Errorf("policy %q: %s shared by every client cannot be scaled", name, CoordinatorNoun(spec))
		}
		if err := coordinatorKinds[r].scale(p, f); err != nil {
			return fmt.Errorf("policy %q: %s: %w", name, CoordinatorNoun(spec), err)
		}
	}
	return nil
}

// scaleServer scales a clone of a server model as its kind does.
func scaleServer(s sim.ServerModel, f float64) (sim.ServerModel, error) {
	k := serverKindOf(s)
	if k == nil || k.scale == nil {
		return s, fmt.Errorf("the %s server cannot be scaled", KindName(s))
	}
	out, err := k.scale(s, f)
	if err != nil {
		return s, fmt.Errorf("%s server: %w", KindName(s), err)
	}
	return out, nil
}

// scaleCount multiplies a count of things (clients, workers, slots) by f,
// rounding to the nearest; it refuses when rounding would change the
// scaled count by more than 10% (fewer than 5 left), as a queue of 10
// workers scaled by 0.01 would, since the pilot would then not see the
// load the full run sees. 0 stays 0.
func scaleCount[N int | int64](n N, f float64, what string) (N, error) {
	if n == 0 {
		return 0, nil
	}
	x := float64(n) * f
	r := math.Round(x)
	if r < 1 || math.Abs(r-x) > 0.1*x {
		return n, fmt.Errorf("%s %d cannot be scaled by %.3g (%.3g is too few)", what, n, f, x)
	}
	return N(r), nil
}

// scaleFree is the scale of a coordinator whose state does not depend on
// the number of clients (a gate that holds everyone; ratios of requests).
func scaleFree(*sim.Policy, float64) error { return nil }

// setScale gives the registered coordinator kind name a scale function.
func setScale(name string, scale func(p *sim.Policy, f float64) error) {
	for _, k := range coordinatorKinds {
		if k.Name == name {
			k.scale = scale
			return
		}
	}
	panic("kinds: setScale: no coordinator " + name)
}

// scaleSpec is the scale of a coordinator whose spec is of type C.
func scaleSpec[C machine.Spec](scale func(c C, f float64) (C, error)) func(p *sim.Policy, f float64) error {
	return func(p *sim.Policy, f float64) error {
		c, _ := specOf[C](p)
		c, err := scale(c, f)
		if err == nil {
			setSpec(p, c)
		}
		return err
	}
}
