package machine

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Hedging sends more copies of an attempt that has not answered after a
// delay (failsafe-go's, Polly's, Envoy's and gRPC's hedging). The rules,
// the same in Do and the simulator:
//
//   - An attempt's first copy goes as any attempt does, through every
//     coordinator. Each hedge is one more request on the wire, so the
//     coordinators that count requests (CopyAdmitter: Pacer, Throttle,
//     CubicRate, Gate) admit it as the request it is, just before it would
//     be sent: it takes its own share (a pacer's request and tokens, a
//     throttle's start, a rate token) if that is there now, and is not
//     sent otherwise: a hedge is never held or queued. The coordinators
//     that count attempts or operations (Limiter, the retry budgets,
//     Breaker, AdaptiveThrottle) let it share its first copy's admission.
//     The Hedger decides the rest (Op.Hedge).
//   - A hedge is due Delay after the previous copy was sent; with Delay 0
//     all copies go at once. With Percentile set, the delay is instead that
//     percentile of the latencies of the last Window successful attempts
//     (from their first copy's send to the answer that ended them, as the
//     drivers report with Op.HedgeLatency), once MinSamples are known;
//     before that it is Delay. An attempt reads the delay once, when its
//     first copy is sent. A hedge is not sent if the attempt already has
//     1+MaxHedges copies, if the operation may not start an attempt now
//     (its budget, its context's deadline), if MaxAttempts would be passed
//     (a hedge is an attempt: it counts in Attempts and against
//     MaxAttempts), if the hedge budget is empty, or if a CopyAdmitter
//     refuses it (the budget is then not spent); a hedge refused once is
//     not asked for again within that attempt. A hedge is not a retry: the
//     coordinators, the backoff and the hooks see the attempt's number
//     within the operation, hedges not counted (Moment.Hedges).
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
	// Percentile, if > 0, makes the delay that percentile (0 < p < 100)
	// of recent successful attempts' latencies; 0 means a fixed Delay.
	Percentile float64
	// Window is how many latencies the percentile is taken over; 0 means
	// 100, at most MaxHedgeWindow.
	Window int
	// MinSamples is how many latencies must be known before the percentile
	// replaces Delay; 0 means 20, at most Window.
	MinSamples int
}

// MaxHedgeWindow bounds HedgeConfig.Window.
const MaxHedgeWindow = 10_000

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
	case !(c.Percentile >= 0 && c.Percentile < 100):
		return fmt.Errorf("hedge: percentile must be >= 0 and below 100 (got %g)", c.Percentile)
	case c.Window < 0 || c.Window > MaxHedgeWindow:
		return fmt.Errorf("hedge: window must be between 0 and %d (got %d)", MaxHedgeWindow, c.Window)
	case c.MinSamples < 0:
		return fmt.Errorf("hedge: min samples must be >= 0 (got %d)", c.MinSamples)
	}
	if d := c.WithDefaults(); d.MinSamples > d.Window {
		return fmt.Errorf("hedge: min samples (%d) must be at most the window (%d)", d.MinSamples, d.Window)
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
	if c.Window == 0 {
		c.Window = 100
	}
	if c.MinSamples == 0 {
		c.MinSamples = min(20, c.Window)
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
	// The last latencies, a ring, with a percentile delay.
	latencies []time.Duration
	next      int
	sorted    []time.Duration // scratch
}

// HedgeStats is what a Hedger counted.
type HedgeStats struct {
	// Sent counts hedges sent, Denied hedges the budget refused.
	Sent, Denied int64
	// Cancelled counts copies (first copies included) cancelled because
	// another copy of their attempt succeeded first: work wasted.
	Cancelled int64
}

// NewHedger returns a Hedger with a full budget.
func NewHedger(c HedgeConfig) (*Hedger, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c = c.WithDefaults()
	h := &Hedger{cfg: c, tokens: c.BudgetBurst}
	if c.Percentile > 0 {
		h.latencies = make([]time.Duration, 0, c.Window)
	}
	return h, nil
}

// Delay returns the delay before an attempt's hedges (see Hedging).
func (h *Hedger) Delay() time.Duration {
	if h.cfg.Percentile <= 0 {
		return h.cfg.Delay
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.latencies)
	if n < h.cfg.MinSamples {
		return h.cfg.Delay
	}
	h.sorted = append(h.sorted[:0], h.latencies...)
	slices.Sort(h.sorted)
	// The nearest rank: the smallest latency with at least p % at or below it.
	k := int(math.Ceil(h.cfg.Percentile/100*float64(n))) - 1
	return h.sorted[min(max(k, 0), n-1)]
}

// record adds a successful attempt's latency.
func (h *Hedger) record(d time.Duration) {
	if h.cfg.Percentile <= 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.latencies) < h.cfg.Window {
		h.latencies = append(h.latencies, d)
		return
	}
	h.latencies[h.next] = d
	h.next = (h.next + 1) % h.cfg.Window
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

// affordable reports whether the budget has a token for a hedge.
func (h *Hedger) affordable() bool {
	if h.cfg.BudgetPercent <= 0 {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tokens >= 1
}

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
// counts as an attempt sent (Attempts), and the driver counts it in the
// Moment.Hedges it passes from then on: it is copy number copies (the
// first is 0) of the pending attempt.
func (o *Op) Hedge(p *Plan, m Moment, copies int) bool {
	h := p.Hedger()
	switch {
	case h == nil || copies < 1 || copies > h.cfg.MaxHedges:
		return false
	case !p.Policy.StartsInTime(m.Since) || !startsBy(m.Now, m.Cutoff):
		return false
	case p.Policy.MaxAttempts > 0 && int(o.attempts) >= p.Policy.MaxAttempts, o.attempts >= 1<<31-1:
		return false
	case !h.affordable():
		h.take() // counts the denial
		return false
	case !o.admitCopy(p, m):
		return false
	case !h.take():
		return false
	}
	o.attempts++
	return true
}

// admitCopy asks every CopyAdmitter of the plan, in order, to admit a hedge
// of the pending attempt now; the first that refuses ends the asking.
func (o *Op) admitCopy(p *Plan, m Moment) bool {
	ask := Ask{Latest: p.latest(m), Retry: o.number(m) > 1, Last: o.last(),
		InputTokens: m.InputTokens, OutputTokens: m.OutputTokens}
	for _, c := range p.Coordinators {
		if a, ok := c.(CopyAdmitter); ok && !a.AdmitCopy(m.Now, ask) {
			return false
		}
	}
	return true
}

// HedgeDelay returns the delay before the pending attempt's hedges, and
// false if the plan does not hedge.
func (o *Op) HedgeDelay(p *Plan) (time.Duration, bool) {
	h := p.Hedger()
	if h == nil {
		return 0, false
	}
	return h.Delay(), true
}

// HedgeLatency tells the plan's Hedger that a hedged attempt succeeded d
// after its first copy was sent, for a percentile delay.
func (o *Op) HedgeLatency(p *Plan, d time.Duration) {
	if h := p.Hedger(); h != nil {
		h.record(d)
	}
}

// Cancelled tells the plan's Hedger that a driver cancelled n copies.
func (o *Op) Cancelled(p *Plan, n int) {
	if h := p.Hedger(); h != nil && n > 0 {
		h.cancelled(n)
	}
}
