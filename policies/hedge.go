package policies

import (
	"fmt"
	"sync"
	"time"
)

// Hedging sends more copies of an attempt that has not answered after a
// delay (failsafe-go's, Polly's, Envoy's and gRPC's hedging). The rules,
// the same in Do and the simulator:
//
//   - An attempt's first copy goes as any attempt does, through every
//     coordinator. Its hedges share that admission (the gate, the limiter
//     slot it got); only the Hedger decides them (Op.Hedge).
//   - A hedge is due Delay after the previous copy was sent; with Delay 0
//     all copies go at once. A hedge is not sent if the attempt already has
//     1+MaxHedges copies, if the operation may not start an attempt now
//     (its budget, its context's deadline), if MaxAttempts would be passed
//     (a hedge is an attempt: it counts in Attempts and against
//     MaxAttempts), or if the hedge budget is empty; a hedge refused once is
//     not asked for again within that attempt.
//   - The attempt ends at its first successful copy; the others are
//     cancelled (Do cancels their contexts; the simulator tells the server).
//     A failed copy while others are out changes nothing; when every copy
//     sent has failed, the attempt fails with the outcome of the last to
//     answer, and the operation retries by its policy.
//   - The coordinators observe one outcome per attempt, not per copy.
//
// The hedge budget, if BudgetPercent > 0, is a token bucket: every attempt
// observed adds BudgetPercent/100 tokens, up to BudgetBurst, and a hedge
// takes one. Over any stretch, hedges ≤ BudgetBurst + BudgetPercent/100 ×
// attempts: in a partial outage, when every attempt is slow, hedging adds
// that share of load and no more.

// MaxHedges bounds HedgeConfig.MaxHedges.
const MaxHedges = 7

// HedgeConfig configures a Hedger. Zero fields take the defaults named.
type HedgeConfig struct {
	// Delay is the wait after a copy is sent before the next; >= 0, and 0
	// sends every copy at once.
	Delay time.Duration
	// MaxHedges is the most copies sent beside an attempt's first; 0 means
	// 1, at most MaxHedges.
	MaxHedges int
	// BudgetPercent, if > 0, lets hedges be at most that share of attempts
	// (plus BudgetBurst); 0 means no budget.
	BudgetPercent float64
	// BudgetBurst is the most tokens the budget saves, and what it starts
	// with; 0 means 10.
	BudgetBurst float64
}

// Validate reports a setting out of range.
func (c HedgeConfig) Validate() error {
	switch {
	case c.Delay < 0:
		return fmt.Errorf("hedge: delay must be >= 0 (got %v)", c.Delay)
	case c.MaxHedges < 0 || c.MaxHedges > MaxHedges:
		return fmt.Errorf("hedge: max_hedges must be between 0 and %d (got %d)", MaxHedges, c.MaxHedges)
	case !(c.BudgetPercent >= 0 && c.BudgetPercent <= 100*MaxHedges):
		return fmt.Errorf("hedge: budget percent must be between 0 and %d (got %g)", 100*MaxHedges, c.BudgetPercent)
	case !(c.BudgetBurst >= 0 && c.BudgetBurst <= 1e6):
		return fmt.Errorf("hedge: budget burst must be between 0 and 1e6 (got %g)", c.BudgetBurst)
	}
	return nil
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c HedgeConfig) WithDefaults() HedgeConfig {
	if c.MaxHedges == 0 {
		c.MaxHedges = 1
	}
	if c.BudgetBurst == 0 {
		c.BudgetBurst = 10
	}
	return c
}

// NewCoordinator returns a Hedger with the settings.
func (c HedgeConfig) NewCoordinator() (Coordinator, error) { return NewHedger(c) }

// Rescale maps the delay onto another clock.
func (c HedgeConfig) Rescale(f func(time.Duration) time.Duration) Spec {
	c.Delay = f(c.Delay)
	return c
}

// Hedger is the hedging control of one client: its settings and its
// budget. As a Coordinator it lets every attempt pass and counts the
// attempts it observes into the budget; Op.Hedge asks it for each hedge.
// Safe for concurrent use.
type Hedger struct {
	cfg    HedgeConfig
	mu     sync.Mutex
	tokens float64
	stats  HedgeStats
}

// HedgeStats is what a Hedger counted.
type HedgeStats struct {
	// Sent counts hedges sent, Denied hedges the budget refused.
	Sent, Denied int64
	// Cancelled counts copies (first copies included) cancelled because
	// another copy of their attempt succeeded first, or because the
	// operation ended while they were out: work wasted.
	Cancelled int64
}

// NewHedger returns a Hedger with a full budget.
func NewHedger(c HedgeConfig) (*Hedger, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c = c.WithDefaults()
	return &Hedger{cfg: c, tokens: c.BudgetBurst}, nil
}

// Config returns the Hedger's settings, defaults filled in.
func (h *Hedger) Config() HedgeConfig { return h.cfg }

// Stats returns what the Hedger has counted so far.
func (h *Hedger) Stats() HedgeStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stats
}

// Admit lets every attempt pass: hedging holds nothing for an attempt.
func (h *Hedger) Admit(time.Time, Ask) Admission { return Admission{} }

// Observe adds an attempt's share to the budget.
func (h *Hedger) Observe(time.Time, int, Outcome) {
	if h.cfg.BudgetPercent <= 0 {
		return
	}
	h.mu.Lock()
	h.tokens = min(h.tokens+h.cfg.BudgetPercent/100, h.cfg.BudgetBurst)
	h.mu.Unlock()
}

// Release does nothing.
func (h *Hedger) Release(time.Time, Waiter, bool) {}

// take spends a token for a hedge, or counts it denied.
func (h *Hedger) take() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cfg.BudgetPercent > 0 {
		if h.tokens < 1 {
			h.stats.Denied++
			return false
		}
		h.tokens--
	}
	h.stats.Sent++
	return true
}

// cancelled counts n cancelled copies.
func (h *Hedger) cancelled(n int) {
	h.mu.Lock()
	h.stats.Cancelled += int64(n)
	h.mu.Unlock()
}

// Hedger returns the plan's Hedger, or nil if it does not hedge.
func (p *Plan) Hedger() *Hedger {
	for _, c := range p.Coordinators {
		if h, ok := c.(*Hedger); ok {
			return h
		}
	}
	return nil
}

// Hedge decides whether the pending attempt, of which copies have been
// sent, sends another copy at m (see Hedging above). On true the copy
// counts as an attempt sent: it is copy number copies (the first is 0) of
// attempt Attempts().
func (o *Op) Hedge(p *Plan, m Moment, copies int) bool {
	h := p.Hedger()
	switch {
	case h == nil || copies < 1 || copies > h.cfg.MaxHedges:
		return false
	case !p.Policy.StartsInTime(m.Since) || !startsBy(m.Now, m.Cutoff):
		return false
	case p.Policy.MaxAttempts > 0 && int(o.attempts) >= p.Policy.MaxAttempts, o.attempts >= 1<<31-1:
		return false
	case !h.take():
		return false
	}
	o.attempts++
	return true
}

// Cancelled tells the plan's Hedger that a driver cancelled n copies.
func (o *Op) Cancelled(p *Plan, n int) {
	if h := p.Hedger(); h != nil && n > 0 {
		h.cancelled(n)
	}
}
