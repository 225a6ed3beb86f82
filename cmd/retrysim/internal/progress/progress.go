// Package progress draws a progress bar for long runs, on a terminal only.
// Nothing it does reaches the simulation or its output: it only counts.
package progress

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// MinRuns is the number of simulation runs below which a bar counting
// runs is not worth drawing: short runs finish before it would be any use.
const MinRuns = 200

// MinEvents is the bound on engine events (runs.Estimate) below which
// a bar counting events is not worth drawing: at the engine's cost per
// event, such work takes a few seconds at most.
const MinEvents = 10_000_000

// Terminal reports whether w is a terminal: an *os.File on one, or a
// writer that says so with an IsTerminal method (tests use that to see
// what a terminal would get). A bar on a writer with an Unwrap method is
// drawn on the writer it wraps.
func Terminal(w io.Writer) bool {
	switch w := w.(type) {
	case interface{ IsTerminal() bool }:
		return w.IsTerminal()
	case *os.File:
		return term.IsTerminal(int(w.Fd()))
	}
	return false
}

// Bar counts work done: finished runs, or engine events. The zero value
// and nil draw nothing. Its methods are safe for concurrent use.
type Bar struct {
	bar   *progressbar.ProgressBar
	mu    sync.Mutex
	total int64
	done  int64
}

// New returns a bar for total runs drawn on w, or a Bar that draws nothing
// when w is not a terminal or total is below MinRuns.
func New(w io.Writer, total int, description string) *Bar {
	if total < MinRuns || !Terminal(w) {
		return &Bar{}
	}
	return newBar(w, int64(total), description,
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true))
}

// NewEvents returns a bar for work measured in engine events, up to
// total (an upper bound, so the bar can jump forward when a run ends
// early), or a Bar that draws nothing when w is not a terminal or total is
// below MinEvents. It shows the share done, the events per second and the
// time elapsed, not a prediction: from an upper bound, that would mislead.
func NewEvents(w io.Writer, total float64, description string) *Bar {
	if total < MinEvents || !Terminal(w) {
		return &Bar{}
	}
	return newBar(w, int64(min(total, 1<<62)), description,
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionShowIts(), // redrawn as the rate changes, so it shows the run is alive
		progressbar.OptionSetItsString("events"),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionSetElapsedTime(true))
}

func newBar(w io.Writer, total int64, description string, options ...progressbar.Option) *Bar {
	// The bar measures the terminal's width on the *os.File itself.
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		w = u.Unwrap()
	}
	options = append([]progressbar.Option{
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(description),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionClearOnFinish(),
	}, options...)
	return &Bar{bar: progressbar.NewOptions64(total, options...), total: total}
}

// Active reports whether the bar is drawn: there is no need to count
// for one that is not.
func (b *Bar) Active() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bar != nil
}

// Add counts one finished run.
func (b *Bar) Add() { b.AddN(1) }

// AddN counts n more units of work. The bar stops just short of its total
// until Done, so that a bound that proves too low does not end it early.
func (b *Bar) AddN(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar == nil {
		return
	}
	n = min(n, b.total-1-b.done)
	if n > 0 {
		b.done += n
		_ = b.bar.Add64(n)
	}
}

// Done removes the bar; after it, the Bar draws nothing.
func (b *Bar) Done() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar != nil {
		_ = b.bar.Finish()
		_ = b.bar.Clear()
		b.bar = nil
	}
}
