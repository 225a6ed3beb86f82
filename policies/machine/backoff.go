// Package machine is the retry machinery that package policies' Do and
// Transport and the simulator (sim) both run: the decisions (Policy,
// backoffs, classification), one operation's state machine (Op, driven
// step by step with a Plan, a Moment and a Waiter), the coordinators and
// the protocol between them and the Op (Coordinator, Ask, Admission,
// Settlement, ...), and the server side's rendering of outcomes as HTTP
// answers (Render, SetRateLimitHeaders, ErrorBody), which serve and the
// simulator use. Nothing here reads the wall clock, sleeps, or touches the
// global random source: time and randomness are passed in.
//
// A production client imports package policies instead: its names are
// this package's (type aliases) with Do and Transport around them.
package machine

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"
)

// Backoff computes the wait before a retry.
//
// retry is the 0-based retry number (0 is the wait after the first failed
// attempt); prev is the wait chosen before the previous retry (0 before the
// first). rng is the caller's random source; a Backoff without randomness
// ignores it. Delay never returns a negative duration.
type Backoff interface {
	Delay(retry int, prev time.Duration, rng *rand.Rand) time.Duration
}

// Constant waits the same time before every retry.
type Constant struct {
	Wait time.Duration
}

// Delay returns c.Wait.
func (c Constant) Delay(int, time.Duration, *rand.Rand) time.Duration { return c.Wait }

func (c Constant) String() string { return fmt.Sprintf("constant(%v)", c.Wait) }

// Ceiling is the shape the exponential backoffs (Exponential, FullJitter,
// EqualJitter, SDKJitter, AddedJitter, DoublingJitter, GRPCJitter) share: the ceiling of the wait before retry n is
// min(Cap, Base·Factor^n). Each of them is a Ceiling with its own Delay, so
// that a composite literal names the fields directly
// (FullJitter{Base: time.Second, Factor: 2}) and code that works on any of
// them takes a type parameter constrained by ~Ceiling.
//
// The rules for the fields: a Cap <= 0 means no cap, which is MaxDelay
// (24 h) in practice; a Factor below 1 (0 included) is treated as 1, a
// constant ceiling of Base; a Base <= 0 gives 0 waits.
type Ceiling struct {
	Base   time.Duration // ceiling of the wait before retry 0; > 0
	Factor float64       // growth per retry; >= 1 (less counts as 1)
	Cap    time.Duration // upper bound; >= Base (<= 0: MaxDelay)
}

// At returns the ceiling before retry n: min(Cap, Base·Factor^n).
func (c Ceiling) At(retry int) time.Duration { return ceiling(c.Base, c.Factor, c.Cap, retry) }

// String lists the fields: "base 500ms, factor 2, cap 8s".
func (c Ceiling) String() string {
	return fmt.Sprintf("base %v, factor %s, cap %v", c.Base, strconv.FormatFloat(c.Factor, 'g', -1, 64), c.Cap)
}

// Exponential is capped exponential backoff without randomness:
// min(Cap, Base·Factor^retry).
type Exponential Ceiling

// Delay returns min(Cap, Base·Factor^retry).
func (e Exponential) Delay(retry int, _ time.Duration, _ *rand.Rand) time.Duration {
	return Ceiling(e).At(retry)
}

func (e Exponential) String() string { return "exponential(" + Ceiling(e).String() + ")" }

// FullJitter draws the wait uniformly from [0, min(Cap, Base·Factor^retry)).
type FullJitter Ceiling

// Delay draws from [0, ceiling) with integer-nanosecond resolution.
func (f FullJitter) Delay(retry int, _ time.Duration, rng *rand.Rand) time.Duration {
	c := Ceiling(f).At(retry)
	if c <= 0 {
		return 0
	}
	return time.Duration(rng.Int64N(int64(c)))
}

func (f FullJitter) String() string { return "full-jitter(" + Ceiling(f).String() + ")" }

// EqualJitter waits half the ceiling plus a uniform draw from the other half.
type EqualJitter Ceiling

// Delay returns ceiling/2 + U[0, ceiling/2).
func (e EqualJitter) Delay(retry int, _ time.Duration, rng *rand.Rand) time.Duration {
	half := Ceiling(e).At(retry) / 2
	if half <= 0 {
		return 0
	}
	return half + time.Duration(rng.Int64N(int64(half)))
}

func (e EqualJitter) String() string { return "equal-jitter(" + Ceiling(e).String() + ")" }

// DecorrelatedJitter draws min(Cap, U[Base, 3·prev)), with prev = Base before
// the first retry. A Cap <= 0 means MaxDelay.
type DecorrelatedJitter struct {
	Base time.Duration
	Cap  time.Duration
}

// Delay returns min(Cap, U[Base, 3·max(prev, Base))), as AWS's
// "Exponential Backoff And Jitter" defines it: the draw is cut at the cap,
// so with the previous wait at the cap most draws wait the cap itself.
func (d DecorrelatedJitter) Delay(_ int, prev time.Duration, rng *rand.Rand) time.Duration {
	limit := d.Cap
	if limit <= 0 {
		limit = MaxDelay
	}
	// prev is at most the cap unless it was a server's wait; clamping it
	// keeps 3·prev from overflowing (caps are at most MaxDelay).
	prev = min(max(prev, d.Base), limit, MaxDelay)
	hi := 3 * prev
	if hi <= d.Base {
		return max(min(d.Base, limit), 0)
	}
	return min(limit, d.Base+time.Duration(rng.Int64N(int64(hi-d.Base))))
}

func (d DecorrelatedJitter) String() string {
	return fmt.Sprintf("decorrelated-jitter(base %v, cap %v)", d.Base, d.Cap)
}

// SDKJitter is the multiplicative jitter of the Anthropic SDKs: the ceiling
// reduced by a random amount of up to 25%, i.e. in (0.75·ceiling, ceiling].
type SDKJitter Ceiling

// Delay returns ceiling − U[0, ceiling/4).
func (s SDKJitter) Delay(retry int, _ time.Duration, rng *rand.Rand) time.Duration {
	c := Ceiling(s).At(retry)
	quarter := c / 4
	if quarter <= 0 {
		return c
	}
	return c - time.Duration(rng.Int64N(int64(quarter)))
}

func (s SDKJitter) String() string { return "sdk-jitter(" + Ceiling(s).String() + ")" }

// AddedJitter is the ceiling plus a random amount of up to 25% of it, i.e.
// in [ceiling, 1.25·ceiling): the shape of Claude Code's retries, whose
// jitter comes on top of the capped exponential wait.
type AddedJitter Ceiling

// Delay returns ceiling + U[0, ceiling/4).
func (a AddedJitter) Delay(retry int, _ time.Duration, rng *rand.Rand) time.Duration {
	c := Ceiling(a).At(retry)
	quarter := c / 4
	if quarter <= 0 {
		return max(c, 0)
	}
	return c + time.Duration(rng.Int64N(int64(quarter)))
}

func (a AddedJitter) String() string { return "added-jitter(" + Ceiling(a).String() + ")" }

// DoublingJitter is the ceiling times a uniform factor in [1, 2): the
// randomised backoff of p-retry, which LangChain.js's AsyncCaller uses.
type DoublingJitter Ceiling

// Delay returns ceiling + U[0, ceiling).
func (d DoublingJitter) Delay(retry int, _ time.Duration, rng *rand.Rand) time.Duration {
	c := Ceiling(d).At(retry)
	if c <= 0 {
		return 0
	}
	return c + time.Duration(rng.Int64N(int64(c)))
}

func (d DoublingJitter) String() string { return "doubling-jitter(" + Ceiling(d).String() + ")" }

// GRPCJitter is gRPC's retry backoff since gRFC A6's 2024 update (grpc-go
// v1.69.0 on): the ceiling times a uniform factor in [0.8, 1.2), so a wait
// may pass the cap by up to a fifth.
type GRPCJitter Ceiling

// Delay returns ceiling·U[0.8, 1.2), in whole nanoseconds.
func (g GRPCJitter) Delay(retry int, _ time.Duration, rng *rand.Rand) time.Duration {
	c := Ceiling(g).At(retry)
	fifth := c / 5
	if fifth <= 0 {
		return max(c, 0)
	}
	return c - fifth + time.Duration(rng.Int64N(int64(2*fifth)))
}

func (g GRPCJitter) String() string { return "grpc-jitter(" + Ceiling(g).String() + ")" }

// MaxDelay is the ceiling of a backoff whose Cap is unset (<= 0): "no cap"
// means no cap below a day, which keeps every sum of waits and times free of
// overflow. It equals MaxServerWait.
const MaxDelay = MaxServerWait

// ceiling returns min(limit, base·factor^retry). factor^retry is computed by
// binary exponentiation, O(log retry) multiplications however close factor
// is to 1, each product converted explicitly so that no platform fuses it
// into a multiply-add (no math.Pow either): every platform rounds the same
// way. A limit <= 0 means MaxDelay; a factor below 1 counts as 1 (the wait
// never shrinks); a base <= 0 gives 0.
func ceiling(base time.Duration, factor float64, limit time.Duration, retry int) time.Duration {
	if limit <= 0 {
		limit = MaxDelay
	}
	if base <= 0 {
		return 0
	}
	if base >= limit {
		return limit
	}
	if !(factor > 1) { // also NaN
		return base
	}
	enough := float64(limit) / float64(base) // growth that reaches the limit
	growth, x := 1.0, factor
	for n := retry; n > 0; n >>= 1 {
		if n&1 == 1 {
			growth = float64(growth * x)
			if growth >= enough {
				return limit
			}
		}
		x = float64(x * x) // may overflow to +Inf, which only ends the loop sooner
	}
	d := float64(float64(base) * growth)
	if d >= float64(limit) {
		return limit
	}
	return time.Duration(d)
}
