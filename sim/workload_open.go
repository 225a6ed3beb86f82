package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// OpenLoop is a workload whose operations arrive whatever the server does:
// a Poisson process (or, with Regular, evenly spaced arrivals) whose rate
// follows Rates, until Until. The arrivals of a run are drawn up front
// from the run's workload stream (it implements StartDrawer).
//
// Let Λ(t) be the expected number of arrivals by time t, the integral of
// the rate from 0 to t. The k-th arrival (k = 1, 2, …) comes at the first
// time t with Λ(t) = S_k, where S_k = E_1 + … + E_k for independent
// exponential draws E_i of mean 1 (a Poisson process), or S_k = k with
// Regular. Arrival times are rounded to the nearest nanosecond; arrivals
// at or after Until are not made.
type OpenLoop struct {
	// Rates is the arrival rate over time; see RateStep.
	Rates []RateStep
	// Until is when arrivals stop (> 0).
	Until time.Duration
	// Regular spaces arrivals evenly in Λ (S_k = k) instead of drawing them.
	Regular bool
	// InputTokens and OutputTokens size every request (0: the server
	// model's defaults).
	InputTokens, OutputTokens int
	// Processes, if > 1, deals the arrivals in turn to that many client
	// processes, each with its own retry layer (ProcessSplit): arrival k
	// (from 0) is process k mod Processes's. 0 or 1: one, shared by all.
	Processes int
}

// ClientProcesses returns the number of client processes (ProcessSplit).
func (w *OpenLoop) ClientProcesses() int { return max(w.Processes, 1) }

// RateStep is one piece of an arrival rate.
type RateStep struct {
	// At is when the piece begins: 0 for the first, increasing after.
	At time.Duration
	// PerSecond is the rate at At, in arrivals per second (>= 0).
	PerSecond float64
	// Ramp makes the rate change linearly from PerSecond at At to the next
	// piece's PerSecond at its At; otherwise the rate holds until then.
	// The last piece holds for ever and cannot ramp.
	Ramp bool
}

// ConstantRate is a rate of perSecond arrivals per second, for ever.
func ConstantRate(perSecond float64) []RateStep {
	return []RateStep{{PerSecond: perSecond}}
}

// SpikeRate is base arrivals per second, except peak from at for length.
func SpikeRate(base, peak float64, at, length time.Duration) []RateStep {
	if at == 0 {
		return []RateStep{{PerSecond: peak}, {At: length, PerSecond: base}}
	}
	return []RateStep{{PerSecond: base}, {At: at, PerSecond: peak}, {At: at + length, PerSecond: base}}
}

// RampRate is from arrivals per second until start, then a linear change
// to reach to at start+over, then to for ever.
func RampRate(from, to float64, start, over time.Duration) []RateStep {
	if start == 0 {
		return []RateStep{{PerSecond: from, Ramp: true}, {At: over, PerSecond: to}}
	}
	return []RateStep{{PerSecond: from}, {At: start, PerSecond: from, Ramp: true}, {At: start + over, PerSecond: to}}
}

// MaxOpenLoopArrivals bounds an open loop's expected arrivals, Λ(Until).
const MaxOpenLoopArrivals = 100_000_000

// Validate reports the first problem with the rates or Until.
func (w *OpenLoop) Validate() error {
	if len(w.Rates) == 0 {
		return fmt.Errorf("open loop: no rates")
	}
	if w.Until <= 0 {
		return fmt.Errorf("open loop: until must be > 0 (got %v)", w.Until)
	}
	if w.InputTokens < 0 || w.OutputTokens < 0 {
		return fmt.Errorf("open loop: negative token count")
	}
	if w.Processes < 0 || w.Processes > MaxProcesses {
		return fmt.Errorf("open loop: processes must be between 0 and %d (got %d)", MaxProcesses, w.Processes)
	}
	for i, s := range w.Rates {
		switch {
		case i == 0 && s.At != 0:
			return fmt.Errorf("open loop: rate 0 must start at 0 (got %v)", s.At)
		case i > 0 && s.At <= w.Rates[i-1].At:
			return fmt.Errorf("open loop: rate %d starts at %v, not after rate %d (%v)", i, s.At, i-1, w.Rates[i-1].At)
		case !(s.PerSecond >= 0) || math.IsInf(s.PerSecond, 1):
			return fmt.Errorf("open loop: rate %d: per second must be >= 0 and finite (got %v)", i, s.PerSecond)
		case s.Ramp && i == len(w.Rates)-1:
			return fmt.Errorf("open loop: rate %d: the last rate cannot ramp (it holds for ever)", i)
		}
	}
	if e := w.Expected(); !(e <= MaxOpenLoopArrivals) {
		return fmt.Errorf("open loop: %.0f arrivals expected before %v; at most %d are supported", e, w.Until, MaxOpenLoopArrivals)
	}
	return nil
}

// Expected returns Λ(Until), the expected number of arrivals.
func (w *OpenLoop) Expected() float64 {
	lam := 0.0
	for j, s := range w.Rates {
		if s.At >= w.Until {
			break
		}
		end := w.Until
		if j+1 < len(w.Rates) {
			end = min(end, w.Rates[j+1].At)
		}
		lam += w.pieceArea(j, end-s.At)
	}
	return lam
}

// rateAt returns the rate of piece j, d after its start.
func (w *OpenLoop) rateAt(j int, d time.Duration) float64 {
	s := w.Rates[j]
	if !s.Ramp {
		return s.PerSecond
	}
	next := w.Rates[j+1]
	frac := float64(d) / float64(next.At-s.At)
	return s.PerSecond + float64((next.PerSecond-s.PerSecond)*frac)
}

// pieceArea returns the expected arrivals in the first d of piece j.
func (w *OpenLoop) pieceArea(j int, d time.Duration) float64 {
	avg := (w.Rates[j].PerSecond + w.rateAt(j, d)) / 2
	return float64(avg * (float64(d) / 1e9))
}

// Operations returns the expected number of arrivals, rounded: a guide for
// sizing. A run has the operations DrawStarts draws.
func (w *OpenLoop) Operations() int { return int(math.Round(w.Expected())) }

// Start is not used: the engine takes the starts DrawStarts draws. It
// returns 0.
func (w *OpenLoop) Start(int, *rand.Rand) time.Duration { return 0 }

// Tokens returns the workload's request size.
func (w *OpenLoop) Tokens(int) (input, output int) { return w.InputTokens, w.OutputTokens }

// DrawStarts draws a run's arrivals (see OpenLoop): one rng.Float64() per
// Poisson arrival (E = −ln(1−U)), plus one for the draw that passes Until;
// none with Regular.
func (w *OpenLoop) DrawStarts(rng *rand.Rand, buf []time.Duration) []time.Duration {
	e := w.Expected()
	if want := int(e+6*math.Sqrt(e)) + 16; cap(buf) < want {
		buf = make([]time.Duration, 0, want)
	}
	buf = buf[:0]
	last := len(w.Rates) - 1
	j := 0          // current piece
	lamStart := 0.0 // Λ at the current piece's start
	target := 0.0   // S_k
	for {
		if w.Regular {
			target++
		} else {
			target += -portableLog(1 - rng.Float64())
		}
		// Move to the piece in which Λ reaches target.
		for j < last {
			length := w.Rates[j+1].At - w.Rates[j].At
			lamEnd := lamStart + w.pieceArea(j, length)
			if target < lamEnd {
				break
			}
			j, lamStart = j+1, lamEnd
		}
		t, ok := w.solve(j, target-lamStart)
		if !ok || t >= w.Until {
			return buf
		}
		buf = append(buf, t)
	}
}

// solve returns the time at which piece j has had delta expected arrivals
// since its start; false if it never does (a last piece with rate 0).
func (w *OpenLoop) solve(j int, delta float64) (time.Duration, bool) {
	s := w.Rates[j]
	r := s.PerSecond
	var seconds float64
	switch {
	case delta <= 0:
		seconds = 0
	case !s.Ramp:
		if r == 0 {
			return 0, false // only in the last piece: earlier ones are skipped
		}
		seconds = delta / r
	default:
		// r·τ + (k/2)·τ² = delta with slope k: τ = 2·delta / (r + √(r² + 2k·delta)).
		next := w.Rates[j+1]
		k := (next.PerSecond - r) / (float64(next.At-s.At) / 1e9)
		disc := float64(r*r) + float64(2*float64(k*delta))
		seconds = 2 * delta / (r + math.Sqrt(max(disc, 0)))
	}
	at := float64(s.At) + math.Round(float64(seconds*1e9))
	if !(at < float64(Horizon)) {
		return 0, false
	}
	return time.Duration(at), true
}
