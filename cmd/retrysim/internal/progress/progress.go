// Package progress draws a progress bar for long runs, on a terminal only.
// Nothing it does reaches the simulation or its output: it only counts.
package progress

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// MinRuns is the number of simulation runs below which no bar is drawn:
// short runs finish before a bar would be any use.
const MinRuns = 200

// Bar counts finished runs. The zero value and nil draw nothing.
type Bar struct {
	bar *progressbar.ProgressBar
}

// New returns a bar for total runs drawn on w, or a Bar that draws nothing
// when w is not a terminal or total is small.
func New(w io.Writer, total int, description string) *Bar {
	f, ok := w.(*os.File)
	if !ok || total < MinRuns || !term.IsTerminal(int(f.Fd())) {
		return &Bar{}
	}
	return &Bar{bar: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription(description),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)}
}

// Add counts one finished run; safe for concurrent use.
func (b *Bar) Add() {
	if b != nil && b.bar != nil {
		_ = b.bar.Add(1)
	}
}

// Done removes the bar.
func (b *Bar) Done() {
	if b != nil && b.bar != nil {
		_ = b.bar.Finish()
		_ = b.bar.Clear()
	}
}
