// Package progress draws a progress bar for long runs, on a terminal only.
// Nothing it does reaches the simulation or its output: it only counts.
package progress

import (
	"fmt"
	"io"
	"os"
	"strconv"
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
	// For a bar of events: its description, when it started and was last
	// described, and the clock (time.Now; tests set their own). The
	// clock is the display's: nothing simulated reads it.
	description      string
	start, described time.Time
	now              func() time.Time
}

// eta is how often an events bar's time left is written anew.
const eta = 500 * time.Millisecond

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
// below MinEvents. It shows the share done, the time elapsed and, once
// events are counted, their rate and the most time left: the rest of the
// bound at the rate so far (the work estimate is an upper bound, so the
// run ends then or sooner).
func NewEvents(w io.Writer, total float64, description string) *Bar {
	if total < MinEvents || !Terminal(w) {
		return &Bar{}
	}
	b := newBar(w, int64(min(total, 1<<62)), description+" (starting)",
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionSetElapsedTime(true))
	b.description, b.now = description, time.Now
	b.start = b.now()
	b.described = b.start
	return b
}

// describe writes an events bar's rate and most time left, every eta.
func (b *Bar) describe() {
	if b.now == nil || b.done == 0 {
		return
	}
	now := b.now()
	if now.Sub(b.described) < eta {
		return
	}
	b.described = now
	elapsed := now.Sub(b.start)
	rate := float64(b.done) / elapsed.Seconds()
	left := time.Duration(float64(b.total-b.done) / rate * float64(time.Second))
	b.bar.Describe(fmt.Sprintf("%s (%s events/s, at most %s left)", b.description, compact(rate), left.Round(time.Second)))
}

// compact writes a rate in three significant digits: 2.35M, 512k, 87.
func compact(x float64) string {
	switch {
	case x >= 1e9:
		return strconv.FormatFloat(x/1e9, 'f', 2, 64) + "G"
	case x >= 1e6:
		return strconv.FormatFloat(x/1e6, 'f', 2, 64) + "M"
	case x >= 1e3:
		return strconv.FormatFloat(x/1e3, 'f', 0, 64) + "k"
	}
	return strconv.FormatFloat(x, 'f', 0, 64)
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
		b.describe()
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
