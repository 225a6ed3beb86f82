package kinds

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

// The built-in kinds. Adding one is one registration here: its decoder,
// describer and parameters; docs/architecture.md shows where the rest of a
// new kind goes.
func init() {
	registerDistributions()
	registerBackoffs()
	registerPreset(&preset{name: "gated", about: "a backoff (full jitter by default) plus a shared gate and start-rate throttle",
		backoff: "full-jitter", coordinators: []string{"gate"}})
	registerCoordinators()
	registerControls()
	registerBrookerControls()
	registerClientPresets()
	registerModels()
	registerHedge()
	registerStreamFaults()
	registerPacer()
	registerLayers()
	registerSharedThrottle()
}

// ceilingFields are the fields of the exponential backoffs.
var ceilingFields = []string{"base", "factor", "cap"}

// decodeCeiling reads base, factor and cap; withFactor false refuses factor.
func decodeCeiling(m *schema.Mapping) machine.Ceiling {
	c := machine.Ceiling{
		Base:   m.Duration("base", DefaultBase),
		Factor: m.Number("factor", DefaultFactor, 1, 1000),
		Cap:    m.Duration("cap", DefaultCap),
	}
	if field, err := checkCeiling(c); err != nil {
		m.Errorf(field, "%v", err)
	}
	return c
}

// checkCeiling refuses a base of 0 and a cap below the base.
func checkCeiling(c machine.Ceiling) (field string, err error) {
	switch {
	case c.Base <= 0:
		return "base", errors.New("must be > 0")
	case c.Cap < c.Base:
		return "cap", fmt.Errorf("must be at least base (%v), got %v", c.Base, c.Cap)
	}
	return "", nil
}

// notImmediate is why a backoff other than immediate has no delay.
func notImmediate(field string) string {
	return "only the immediate policy has a fixed delay; use base and cap"
}

// ceilingType is a backoff defined over machine.Ceiling.
type ceilingType interface {
	~struct {
		Base   time.Duration
		Factor float64
		Cap    time.Duration
	}
	policies.Backoff
}

// firstCeiling is the ceiling of the first retry's wait: min(base, cap),
// never negative.
func firstCeiling(base, cap time.Duration) time.Duration {
	if cap > 0 {
		return max(min(base, cap), 0)
	}
	return max(base, 0)
}

// ceilingBackoff registers an exponential backoff of type B, a Ceiling;
// minWait gives its smallest wait from the first retry's ceiling.
func ceilingBackoff[B ceilingType](name, about, shape string, minWait func(first time.Duration) time.Duration) {
	registerBackoff(name, about, ceilingFields,
		func(m *schema.Mapping) B { return B(decodeCeiling(m)) },
		func(b B) string {
			c := machine.Ceiling(b)
			return fmt.Sprintf(shape, c.Cap, c.Base, strconv.FormatFloat(c.Factor, 'g', -1, 64))
		},
		notImmediate,
		func(b B) (string, error) { return checkCeiling(machine.Ceiling(b)) },
		func(b B) time.Duration { c := machine.Ceiling(b); return minWait(firstCeiling(c.Base, c.Cap)) },
		func(b B) BackoffShape { c := machine.Ceiling(b); return BackoffShape{name, c.Base, c.Cap, c.Factor} },
		backoffParam[B]{paramBase, func(b B, v int64) B {
			c := machine.Ceiling(b)
			c.Base = time.Duration(v)
			return B(c)
		}},
		backoffParam[B]{paramCap, func(b B, v int64) B {
			c := machine.Ceiling(b)
			c.Cap = time.Duration(v)
			return B(c)
		}})
}

func registerBackoffs() {
	registerBackoff("immediate", "retry after a fixed short wait (delay, default 100ms)", []string{"delay"},
		func(m *schema.Mapping) policies.Constant {
			return policies.Constant{Wait: m.Duration("delay", DefaultImmediate)}
		},
		func(b policies.Constant) string { return fmt.Sprintf("fixed %v", b.Wait) },
		func(string) string { return "the immediate policy has only a delay" },
		nil,
		func(b policies.Constant) time.Duration { return max(b.Wait, 0) },
		func(b policies.Constant) BackoffShape {
			return BackoffShape{Kind: "immediate", Base: b.Wait, Cap: b.Wait}
		},
		backoffParam[policies.Constant]{paramDelay, func(_ policies.Constant, v int64) policies.Constant {
			return policies.Constant{Wait: time.Duration(v)}
		}})
	ceilingBackoff[policies.Exponential]("capped-exponential", "min(cap, base·factor^n), no randomness", "min(%v, %v·%s^n)",
		func(first time.Duration) time.Duration { return first })
	ceilingBackoff[policies.FullJitter]("full-jitter", "uniform(0, min(cap, base·factor^n))", "full jitter: U(0, min(%v, %v·%s^n))",
		func(time.Duration) time.Duration { return 0 })
	ceilingBackoff[policies.EqualJitter]("equal-jitter", "half the ceiling plus uniform(0, half)", "equal jitter over min(%v, %v·%s^n)",
		func(first time.Duration) time.Duration { return first / 2 })
	registerBackoff("decorrelated-jitter", "min(cap, uniform(base, 3·previous wait))", []string{"base", "cap"},
		func(m *schema.Mapping) policies.DecorrelatedJitter {
			c := decodeCeiling(m)
			return policies.DecorrelatedJitter{Base: c.Base, Cap: c.Cap}
		},
		func(b policies.DecorrelatedJitter) string {
			return fmt.Sprintf("decorrelated jitter: min(%v, U(%v, 3·previous))", b.Cap, b.Base)
		},
		func(field string) string {
			if field == "factor" {
				return "decorrelated jitter grows from the previous wait; it has no factor"
			}
			return notImmediate(field)
		},
		func(b policies.DecorrelatedJitter) (string, error) {
			return checkCeiling(machine.Ceiling{Base: b.Base, Factor: 1, Cap: b.Cap})
		},
		func(b policies.DecorrelatedJitter) time.Duration { return firstCeiling(b.Base, b.Cap) },
		func(b policies.DecorrelatedJitter) BackoffShape {
			return BackoffShape{Kind: "decorrelated-jitter", Base: b.Base, Cap: b.Cap}
		},
		backoffParam[policies.DecorrelatedJitter]{paramBase, func(b policies.DecorrelatedJitter, v int64) policies.DecorrelatedJitter {
			b.Base = time.Duration(v)
			return b
		}},
		backoffParam[policies.DecorrelatedJitter]{paramCap, func(b policies.DecorrelatedJitter, v int64) policies.DecorrelatedJitter {
			b.Cap = time.Duration(v)
			return b
		}})
	ceilingBackoff[policies.SDKJitter]("sdk-jitter", "ceiling reduced by up to 25%, as the Anthropic SDKs do", "SDK jitter: min(%v, %v·%s^n)·U(0.75, 1]",
		func(first time.Duration) time.Duration { return first - first/4 })
	ceilingBackoff[policies.AddedJitter]("added-jitter", "ceiling plus up to 25%, as Claude Code does", "added jitter: min(%v, %v·%s^n)·U[1, 1.25)",
		func(first time.Duration) time.Duration { return first })
	ceilingBackoff[policies.DoublingJitter]("doubling-jitter", "ceiling times uniform(1, 2), as LangChain.js does (p-retry)", "doubling jitter: min(%v, %v·%s^n)·U[1, 2)",
		func(first time.Duration) time.Duration { return first })
	ceilingBackoff[policies.GRPCJitter]("grpc-jitter", "ceiling times uniform(0.8, 1.2), as gRPC does since gRFC A6's 2024 update", "gRPC jitter: min(%v, %v·%s^n)·U[0.8, 1.2)",
		func(first time.Duration) time.Duration { return first - first/5 })
}

// LocalControls are the coordinators of a policy that one process's retry
// loop in another language can run (package export), by their values: the
// gate, the start-rate throttle and the in-flight limit. Others are the
// rest, in the policy's order.
type LocalControls struct {
	Gate     bool
	Throttle *ThrottleValues // nil: none
	Limit    *LimitValues    // nil: none
	Others   []machine.Spec
}

// ThrottleValues is a throttle's Count starts per Per, with at most
// MaxQueue waiting (0: no bound).
type ThrottleValues struct {
	Count    int
	Per      time.Duration
	MaxQueue int
}

// LimitValues is an in-flight limit, with at most MaxQueue waiting (0: no
// bound).
type LimitValues struct{ MaxInFlight, MaxQueue int }

// LocalControlsOf sorts p's coordinators into LocalControls.
func LocalControlsOf(p *sim.Policy) LocalControls {
	var lc LocalControls
	for _, s := range p.Coordinators {
		switch c := s.(type) {
		case machine.GateConfig:
			lc.Gate = true
		case machine.ThrottleConfig:
			lc.Throttle = &ThrottleValues{c.Count, c.Per, c.MaxQueue}
		case machine.LimitConfig:
			lc.Limit = &LimitValues{c.MaxInFlight, c.MaxQueue}
		default:
			lc.Others = append(lc.Others, s)
		}
	}
	return lc
}

func registerCoordinators() {
	registerCoordinator(&coordinatorKind{
		Kind: registerKind(&Kind{Category: Coordinators, Name: "gate", Fields: []string{"gate"},
			About: "gate: true holds every client while a server-given retry-after runs (on for gated)"}),
		decode: func(_ *schema.Decoder, m *schema.Mapping, p *sim.Policy, on bool) {
			if m.Boolean("gate", on) {
				setSpec(p, machine.GateConfig{})
			}
		},
		describe: func(p *sim.Policy) string {
			if _, ok := specOf[machine.GateConfig](p); ok {
				return "shared retry-after gate"
			}
			return ""
		},
		is:    isSpec[machine.GateConfig],
		scale: scaleFree, // it holds everyone at once
	})
	registerCoordinator(&coordinatorKind{
		Kind: registerKind(&Kind{Category: Coordinators, Name: "throttle", Fields: []string{"throttle"}, Params: []*Param{paramThrottle},
			About: "throttle: {rate, per, max_queue} spaces every start at rate per period"}),
		decode: func(d *schema.Decoder, m *schema.Mapping, p *sim.Policy, _ bool) {
			if n := m.Get("throttle"); n != nil {
				setSpec(p, decodeThrottle(d, n, m.Field("throttle")))
			}
		},
		describe: func(p *sim.Policy) string {
			th, ok := specOf[machine.ThrottleConfig](p)
			if !ok {
				return ""
			}
			c := fmt.Sprintf("throttle %d starts per %v", th.Count, th.Per)
			if th.MaxQueue > 0 {
				c += fmt.Sprintf(", queue ≤ %d", th.MaxQueue)
			}
			return c
		},
		is:    isSpec[machine.ThrottleConfig],
		paces: true,
		scale: func(p *sim.Policy, f float64) error {
			// A longer period scales the rate without rounding its count.
			t, _ := specOf[machine.ThrottleConfig](p)
			t.Per = time.Duration(float64(t.Per) / f)
			var err error
			t.MaxQueue, err = scaleCount(t.MaxQueue, f, "throttle queue slots")
			setSpec(p, t)
			return err
		},
	})
	paramThrottle.setters = append(paramThrottle.setters, forPolicies(func(p *sim.Policy, v int64) bool {
		t, ok := specOf[machine.ThrottleConfig](p)
		if ok {
			t.Count = int(v)
			setSpec(p, t)
		}
		return ok
	}))
	registerCoordinator(&coordinatorKind{
		Kind: registerKind(&Kind{Category: Coordinators, Name: "max_in_flight", Fields: []string{"max_in_flight", "max_queue"},
			About: "max_in_flight: N bounds the attempts in flight; max_queue: M bounds those waiting"}),
		decode: func(_ *schema.Decoder, m *schema.Mapping, p *sim.Policy, _ bool) {
			if !m.Has("max_in_flight") {
				if m.Has("max_queue") {
					m.Errorf("max_queue", "bounds the queue of max_in_flight, which is not set")
				}
				return
			}
			setSpec(p, machine.LimitConfig{
				MaxInFlight: int(m.Integer("max_in_flight", 1, 1, 1<<31-1)),
				MaxQueue:    int(m.Integer("max_queue", 0, 0, 1<<31-1)),
			})
		},
		describe: func(p *sim.Policy) string {
			l, ok := specOf[machine.LimitConfig](p)
			if !ok {
				return ""
			}
			c := fmt.Sprintf("at most %d in flight", l.MaxInFlight)
			if l.MaxQueue > 0 {
				c += fmt.Sprintf(", queue ≤ %d", l.MaxQueue)
			}
			return c
		},
		is: isSpec[machine.LimitConfig],
		scale: func(p *sim.Policy, f float64) error {
			l, _ := specOf[machine.LimitConfig](p)
			var err error
			if l.MaxInFlight, err = scaleCount(l.MaxInFlight, f, "max_in_flight"); err != nil {
				return err
			}
			l.MaxQueue, err = scaleCount(l.MaxQueue, f, "max_queue")
			setSpec(p, l)
			return err
		},
	})
	registerCoordinator(&coordinatorKind{
		Kind: registerKind(&Kind{Category: Coordinators, Name: "fallback", Fields: []string{"fallback"},
			About: "fallback: {after, sticky, restart} moves an operation to the fallback model after capacity failures"}),
		decode: func(d *schema.Decoder, m *schema.Mapping, p *sim.Policy, _ bool) {
			n := m.Get("fallback")
			if n == nil {
				return
			}
			fm := d.Mapping(n, m.Field("fallback"))
			p.Fallback = &sim.Fallback{
				After:   int(fm.Integer("after", 0, 0, 1<<31-1)),
				Sticky:  fm.Boolean("sticky", false),
				Restart: fm.Boolean("restart", false),
			}
			fm.Finish()
		},
		describe: func(p *sim.Policy) string {
			f := p.Fallback
			if f == nil {
				return ""
			}
			after := f.After
			if after == 0 {
				after = machine.DefaultFallbackAfter
			}
			c := fmt.Sprintf("fallback model after %d capacity failures", after)
			if f.Sticky {
				c += ", sticky"
			}
			if f.Restart {
				c += ", where the retries start again"
			}
			return c
		},
		clone: func(p *sim.Policy) {
			if f := p.Fallback; f != nil {
				c := *f
				p.Fallback = &c
			}
		},
	})
}

func decodeThrottle(d *schema.Decoder, n *yaml.Node, path string) machine.ThrottleConfig {
	m := d.Mapping(n, path)
	if !m.Has("rate") {
		m.Errorf("rate", "missing: how many starts per period (per, default 1s)")
	}
	t := machine.ThrottleConfig{
		Count:    int(m.Integer("rate", 1, 1, 1<<31-1)),
		Per:      m.Duration("per", DefaultThrottlePer),
		MaxQueue: int(m.Integer("max_queue", 0, 0, 1<<31-1)),
	}
	if t.Per == 0 {
		m.Errorf("per", "must be > 0")
	}
	m.Finish()
	return t
}
