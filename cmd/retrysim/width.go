package main

import (
	"io"
	"os"
	"strconv"

	"github.com/urfave/cli/v3"
	"golang.org/x/term"

	"github.com/retrysim/retrysim/cmd/retrysim/internal/progress"
	"github.com/retrysim/retrysim/report"
)

// wideFlag is --wide, a flag of every command: tables keep every column
// on a terminal too.
func wideFlag(wide *bool) cli.Flag {
	return &cli.BoolFlag{Name: "wide", Destination: wide,
		Usage: "tables on a terminal keep every column (pipes and files always do)"}
}

// stdoutWriter is the commands' stdout. On a terminal, it tells tables
// how wide they may be (report.Width): $COLUMNS, else the terminal's own
// width, else 80; with --wide, or to a pipe or a file, there is no limit.
type stdoutWriter struct {
	w    io.Writer
	wide *bool
}

func (s stdoutWriter) Write(p []byte) (int, error) { return s.w.Write(p) }

// Unwrap gives progress bars and terminal checks the writer itself.
func (s stdoutWriter) Unwrap() io.Writer { return s.w }

// Width is the number of columns a table may take; 0 for no limit.
func (s stdoutWriter) Width() int {
	if *s.wide {
		return 0
	}
	if t, ok := s.w.(report.Width); ok { // tests: a terminal of a given width
		return t.Width()
	}
	f, ok := s.w.(*os.File)
	if !ok || !progress.Terminal(f) {
		return 0
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if n, _, err := term.GetSize(int(f.Fd())); err == nil && n > 0 {
		return n
	}
	return 80
}
