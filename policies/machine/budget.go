package machine

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// ErrRetryBudget is the cause of StopBudget: a retry budget shared across
// operations (RetryQuota, RetryThrottling, RatioBudget) refused a retry.
var ErrRetryBudget = errors.New("retry budget exhausted")

// Retry budgets decide only retries: an operation's first attempt always
// passes them. A refused retry stops its operation with StopBudget; it is
// not sent.

// RetryQuotaConfig configures a RetryQuota. Zero fields take the defaults
// of the AWS SDK for Go v2 standard retryer's long-standing schedule (see
// DefaultRetryQuota); negative fields are invalid.
type RetryQuotaConfig struct {
	// Capacity is the most tokens the quota holds; it starts full. 0 means 500.
	Capacity int
	// RetryCost is what a retry pays; 0 means 5.
	RetryCost int
	// TimeoutRetryCost is what a retry pays after an attempt that got no
	// response at all (class Transient with Status 0: a timeout or a
	// connection error); 0 means 10.
	TimeoutRetryCost int
	// ThrottleRetryCost is what a retry pays after a retry-after or
	// capacity rejection; 0 means RetryCost. (The SDK's newer schedule
	// prices retries by this distinction: transient 14, throttling 5.)
	ThrottleRetryCost int
	// SuccessRefund is what an operation's successful first attempt adds
	// back; 0 means 1, a negative value none (the SDK's adaptive mode
	// before v1.48.0 never adds it).
	SuccessRefund int
	// RefundEverySuccess makes a successful retry add SuccessRefund too, on
	// top of its cost back, as the SDK did before v1.48.0 (its attempt
	// token's increment applied to every attempt).
	RefundEverySuccess bool
}

// DefaultRetryQuota returns the long-standing schedule of the AWS SDK for Go
// v2 standard retryer (package aws/retry, constants DefaultRetryRateTokens,
// DefaultRetryCost, DefaultRetryTimeoutCost, DefaultNoRetryIncrement):
// capacity 500, a retry costs 5, a retry after a timeout 10, a successful
// first attempt refunds 1.
func DefaultRetryQuota() RetryQuotaConfig {
	return RetryQuotaConfig{Capacity: 500, RetryCost: 5, TimeoutRetryCost: 10, ThrottleRetryCost: 5, SuccessRefund: 1}
}

// Validate reports a negative capacity or cost.
func (c RetryQuotaConfig) Validate() error {
	if c.Capacity < 0 || c.RetryCost < 0 || c.TimeoutRetryCost < 0 || c.ThrottleRetryCost < 0 {
		return fmt.Errorf("retry quota needs capacity and costs >= 0 (got %+v)", c)
	}
	return nil
}

// WithDefaults returns c with every unset field at the value the control
// runs with (what a report shows as its effective settings).
func (c RetryQuotaConfig) WithDefaults() RetryQuotaConfig {
	d := DefaultRetryQuota()
	if c.Capacity == 0 {
		c.Capacity = d.Capacity
	}
	if c.RetryCost == 0 {
		c.RetryCost = d.RetryCost
	}
	if c.TimeoutRetryCost == 0 {
		c.TimeoutRetryCost = d.TimeoutRetryCost
	}
	if c.ThrottleRetryCost == 0 {
		c.ThrottleRetryCost = c.RetryCost
	}
	switch {
	case c.SuccessRefund == 0:
		c.SuccessRefund = d.SuccessRefund
	case c.SuccessRefund < 0:
		c.SuccessRefund = 0
	}
	return c
}

// RetryQuota is a client-wide token bucket that pays for retries, as the AWS
// SDKs' standard retry mode does:
//
//   - a retry may start only if the quota holds at least its cost, which it
//     then pays: TimeoutRetryCost after an attempt that got no response
//     (Transient, Status 0), ThrottleRetryCost after a RetryAfter or
//     Capacity rejection, RetryCost after anything else;
//   - a successful retry gets its cost back; a failed one does not;
//   - a successful first attempt adds SuccessRefund (with
//     RefundEverySuccess, every successful attempt does);
//   - the quota never holds more than Capacity, and starts full.
//
// So during an outage every failing retry drains the quota until retries
// stop altogether; successes refill it. The quota charges when the retry
// asks to start (after its backoff); the SDK charges when it decides to
// retry, before the backoff. Safe for concurrent use.
type RetryQuota struct {
	cfg    RetryQuotaConfig
	mu     sync.Mutex
	tokens int
}

// NewRetryQuota returns a full quota.
func NewRetryQuota(c RetryQuotaConfig) (*RetryQuota, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c = c.WithDefaults()
	return &RetryQuota{cfg: c, tokens: c.Capacity}, nil
}

// Tokens returns the tokens the quota holds now.
func (q *RetryQuota) Tokens() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.tokens
}

// cost is the price of a retry after an attempt whose outcome was last.
func (q *RetryQuota) cost(last Outcome) int {
	switch {
	case last.Class == Transient && last.Status == 0:
		return q.cfg.TimeoutRetryCost
	case last.Class == RetryAfter || last.Class == Capacity:
		return q.cfg.ThrottleRetryCost
	}
	return q.cfg.RetryCost
}

func (q *RetryQuota) add(n int) { q.tokens = min(q.tokens+n, q.cfg.Capacity) }

// Admit lets a first attempt pass; a retry pays its cost (AdmitGrant) or
// stops the operation with StopBudget.
func (q *RetryQuota) Admit(now time.Time, a Ask) Admission {
	if !a.Retry {
		return Admission{Kind: AdmitPass}
	}
	c := q.cost(a.Last)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.tokens < c {
		return Admission{Kind: AdmitDeny, Reason: StopBudget, Cause: ErrRetryBudget}
	}
	q.tokens -= c
	return Admission{Kind: AdmitGrant, At: now}
}

// Observe refunds SuccessRefund for a successful first attempt (with
// RefundEverySuccess, for any successful attempt).
func (q *RetryQuota) Observe(_ time.Time, attempt int, out Outcome) {
	if (attempt == 1 || q.cfg.RefundEverySuccess) && out.Class == Success {
		q.mu.Lock()
		q.add(q.cfg.SuccessRefund)
		q.mu.Unlock()
	}
}

// Settle refunds a retry's cost when it succeeded or went unused (stopped
// by a later coordinator, or abandoned before its outcome was known).
func (q *RetryQuota) Settle(_ time.Time, s Settlement) {
	if s.Sent && s.Outcome.Class != Success {
		return
	}
	q.mu.Lock()
	q.add(q.cost(s.Last))
	q.mu.Unlock()
}

// Release does nothing: without the attempt it cannot tell what to refund.
// The Op calls Settle instead; a driver of its own must too.
func (q *RetryQuota) Release(time.Time, Waiter, bool) {}

// RetryThrottlingConfig configures RetryThrottling, gRPC's retry throttling
// (gRFC A6, the service config's retryThrottling). Zero fields take the
// defaults of A6's example: 10 tokens, ratio 0.1.
type RetryThrottlingConfig struct {
	// MaxTokens is where the count starts and its ceiling; 1 to 1000 (gRPC's
	// bounds). 0 means 10.
	MaxTokens int
	// TokenRatio is what each success adds, > 0, in thousandths: gRFC A6
	// ignores decimals beyond the third (0.5466 is 0.546). 0 means 0.1.
	TokenRatio float64
}

// Validate reports values gRPC would not accept.
func (c RetryThrottlingConfig) Validate() error {
	if c.MaxTokens < 0 || c.MaxTokens > 1000 || c.TokenRatio < 0 || math.IsNaN(c.TokenRatio) || math.IsInf(c.TokenRatio, 0) {
		return fmt.Errorf("retry throttling needs max tokens in [0, 1000] and a finite token ratio >= 0 (got %d, %v)", c.MaxTokens, c.TokenRatio)
	}
	if c.TokenRatio > 0 && thousandths(c.TokenRatio) < 1 {
		return fmt.Errorf("retry throttling: token ratio %v is below gRPC's precision of 0.001", c.TokenRatio)
	}
	return nil
}

// RetryThrottling is gRPC's client-side retry throttling, shared by every
// operation of a client (one count per server name in gRPC):
//
//   - the count starts at MaxTokens;
//   - every failed attempt whose outcome could be retried (RetryAfter,
//     Capacity, Transient) takes 1 off it, never below 0; Terminal
//     failures leave it alone (gRPC counts only the status codes its retry
//     policy retries);
//   - every success adds TokenRatio, up to MaxTokens;
//   - a retry may start only while the count is above MaxTokens/2.
//
// gRPC checks the count as it decides to retry; this checks it when the
// retry asks to start, after its backoff. The count is kept in exact
// thousandths. Safe for concurrent use.
type RetryThrottling struct {
	max, ratio int64 // in thousandths of a token
	mu         sync.Mutex
	tokens     int64 // in thousandths of a token
}

// WithDefaults returns c with every unset field at the value the control
// runs with (what a report shows as its effective settings).
func (c RetryThrottlingConfig) WithDefaults() RetryThrottlingConfig {
	if c.MaxTokens == 0 {
		c.MaxTokens = 10
	}
	if c.TokenRatio == 0 {
		c.TokenRatio = 0.1
	}
	return c
}

// thousandths returns r's first three decimals, as gRFC A6 reads a token
// ratio; the tiny margin keeps 0.29 (289.999… thousandths) at 290.
func thousandths(r float64) int64 { return int64(math.Floor(r*1000 + 1e-6)) }

// NewRetryThrottling returns a full count.
func NewRetryThrottling(c RetryThrottlingConfig) (*RetryThrottling, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c = c.WithDefaults()
	t := &RetryThrottling{max: int64(c.MaxTokens) * 1000, ratio: thousandths(c.TokenRatio)}
	t.tokens = t.max
	return t, nil
}

// Tokens returns the count now.
func (t *RetryThrottling) Tokens() float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return float64(t.tokens) / 1000
}

// Admit lets a first attempt pass, and a retry while the count is above
// half its maximum; otherwise it stops the operation with StopBudget.
func (t *RetryThrottling) Admit(_ time.Time, a Ask) Admission {
	if !a.Retry {
		return Admission{Kind: AdmitPass}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if 2*t.tokens <= t.max {
		return Admission{Kind: AdmitDeny, Reason: StopBudget, Cause: ErrRetryBudget}
	}
	return Admission{Kind: AdmitPass}
}

// Observe moves the count: -1 for a retryable failure, +TokenRatio for a
// success.
func (t *RetryThrottling) Observe(_ time.Time, _ int, out Outcome) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch out.Class {
	case Success:
		t.tokens = min(t.tokens+t.ratio, t.max)
	case RetryAfter, Capacity, Transient:
		t.tokens = max(t.tokens-1000, 0)
	}
}

// Release does nothing: RetryThrottling holds nothing for an attempt.
func (t *RetryThrottling) Release(time.Time, Waiter, bool) {}

// RatioBudgetConfig configures a RatioBudget. Zero fields take Finagle's
// RetryBudget defaults: 20 % over 10 s, plus 10 retries per second.
type RatioBudgetConfig struct {
	// Percent is the share of requests that may be retried, in percent. 0
	// means 20; use a negative value for none (only the reserve).
	Percent int
	// MinPerSecond is the reserve: retries allowed in every window whatever
	// the requests, as a rate (MinPerSecond × Window retries per window,
	// rounded down). 0 means 10; use a negative value for none.
	MinPerSecond int
	// Window is how far back requests and retries count; 0 means 10 s.
	Window time.Duration
	// Slots is how many slots the window is cut into; 0 means 10.
	Slots int
	// CountRetries counts retries as requests too, and lets a retry start
	// while the retries are below Percent % of all requests: the SRE book's
	// per-client budget ("the ratio of requests that correspond to
	// retries"). Off, requests are first attempts only, as in Finagle.
	CountRetries bool
}

// Validate reports a negative window or slot count.
func (c RatioBudgetConfig) Validate() error {
	if c.Window < 0 || c.Slots < 0 {
		return fmt.Errorf("ratio budget needs window and slots >= 0 (got %v, %d)", c.Window, c.Slots)
	}
	c = c.WithDefaults()
	if _, err := newWindow(c.Window, c.Slots); err != nil {
		return fmt.Errorf("ratio budget: %w", err)
	}
	return nil
}

// WithDefaults returns c with every unset field at the value the control
// runs with (what a report shows as its effective settings).
func (c RatioBudgetConfig) WithDefaults() RatioBudgetConfig {
	switch {
	case c.Percent == 0:
		c.Percent = 20
	case c.Percent < 0:
		c.Percent = 0
	}
	switch {
	case c.MinPerSecond == 0:
		c.MinPerSecond = 10
	case c.MinPerSecond < 0:
		c.MinPerSecond = 0
	}
	if c.Window == 0 {
		c.Window = 10 * time.Second
	}
	if c.Slots == 0 {
		c.Slots = DefaultWindowSlots
	}
	return c
}

// RatioBudget lets retries be at most a share of requests over a sliding
// window, plus a reserve, as Finagle's RetryBudget does (Envoy's retry
// budget bounds active retries against active requests in the same spirit).
// Requests are operations' first attempts; with R = MinPerSecond × Window
// (in seconds, rounded down) and both counts over the window (see the
// window's slots on RatioBudgetConfig), a retry may start only if
//
//	100 × (retries + 1) ≤ Percent × requests + 100 × R
//
// that is, if after it retries stay within Percent % of requests plus the
// reserve. With CountRetries the rule is the SRE book's:
//
//	100 × retries < Percent × (requests + retries) + 100 × R
//
// (retries now below Percent % of all requests). Both are counted when admitted (AdmitGrant): a first attempt or
// retry that a later coordinator then stops, or that is abandoned before it
// is sent, is taken off the count again (in the slot of that moment). A
// refused retry stops its operation with StopBudget. Safe for concurrent use.
type RatioBudget struct {
	percent, reserve int64
	ofAll            bool // CountRetries
	mu               sync.Mutex
	w                *window // [0]: requests, [1]: retries
}

// NewRatioBudget returns an empty budget.
func NewRatioBudget(c RatioBudgetConfig) (*RatioBudget, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c = c.WithDefaults()
	w, err := newWindow(c.Window, c.Slots)
	if err != nil {
		return nil, err
	}
	reserve := int64(c.MinPerSecond) * int64(c.Window) / int64(time.Second)
	return &RatioBudget{percent: int64(c.Percent), reserve: reserve, ofAll: c.CountRetries, w: w}, nil
}

// Counts returns the requests and retries counted in the window at now.
func (b *RatioBudget) Counts(now time.Time) (requests, retries int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.sums(now)
}

// Admit counts a first attempt, and a retry that the budget allows
// (AdmitGrant); it stops a retry that it does not with StopBudget.
func (b *RatioBudget) Admit(now time.Time, a Ask) Admission {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !a.Retry {
		b.w.at(now)[0]++
		return Admission{Kind: AdmitGrant, At: now}
	}
	requests, retries := b.w.sums(now)
	allowed := 100*(retries+1) <= b.percent*requests+100*b.reserve
	if b.ofAll {
		allowed = 100*retries < b.percent*(requests+retries)+100*b.reserve
	}
	if !allowed {
		return Admission{Kind: AdmitDeny, Reason: StopBudget, Cause: ErrRetryBudget}
	}
	b.w.at(now)[1]++
	return Admission{Kind: AdmitGrant, At: now}
}

// Observe does nothing: the budget counts attempts when they are admitted.
func (b *RatioBudget) Observe(time.Time, int, Outcome) {}

// Settle takes an unused first attempt or retry off the count.
func (b *RatioBudget) Settle(now time.Time, s Settlement) {
	if s.Sent {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if s.Retry {
		b.w.at(now)[1]--
	} else {
		b.w.at(now)[0]--
	}
}

// Release does nothing; the Op calls Settle instead.
func (b *RatioBudget) Release(time.Time, Waiter, bool) {}

// NewCoordinator returns a fresh RetryThrottling with full tokens: a
// RetryThrottlingConfig is its Spec.
func (c RetryThrottlingConfig) NewCoordinator() (Coordinator, error) { return NewRetryThrottling(c) }

// Stops reports that retry throttling stops operations with StopBudget.
func (RetryThrottlingConfig) Stops() StopReason { return StopBudget }

// NewCoordinator returns a fresh RatioBudget: a RatioBudgetConfig is its
// Spec.
func (c RatioBudgetConfig) NewCoordinator() (Coordinator, error) { return NewRatioBudget(c) }

// Stops reports that a ratio budget stops operations with StopBudget.
func (RatioBudgetConfig) Stops() StopReason { return StopBudget }

// NewCoordinator returns a fresh, full RetryQuota: a RetryQuotaConfig is
// its Spec.
func (c RetryQuotaConfig) NewCoordinator() (Coordinator, error) { return NewRetryQuota(c) }

// Stops reports that a retry quota stops operations with StopBudget.
func (RetryQuotaConfig) Stops() StopReason { return StopBudget }
