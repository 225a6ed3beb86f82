package main

import (
	"io"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/cmd/retrysim/internal/progress"
)

// quietFlag is --quiet (-q), a flag of every command: the commands' stderr
// (progress, wrote lines, warnings, --verbose's counts, serve's log) says
// nothing. Errors are not written there: main prints them, always.
func quietFlag(quiet *bool) cli.Flag {
	return &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Destination: quiet,
		Usage: "print nothing on stderr but errors"}
}

// quietWriter is the commands' stderr: w, or nothing once *quiet is set
// (flags are parsed before any command writes).
type quietWriter struct {
	w     io.Writer
	quiet *bool
}

func (q quietWriter) Write(p []byte) (int, error) {
	if *q.quiet {
		return len(p), nil
	}
	return q.w.Write(p)
}

// IsTerminal tells progress bars whether to draw: not when quiet.
func (q quietWriter) IsTerminal() bool { return !*q.quiet && progress.Terminal(q.w) }

// Unwrap gives progress bars the terminal itself, whose width they measure.
func (q quietWriter) Unwrap() io.Writer { return q.w }
