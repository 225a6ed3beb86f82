// Command retrysim compares retry policies against a simulated overloaded,
// rate-limited API. Run "retrysim --help" for the commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1 // the run failed
	exitUsage = 2 // bad flags, arguments or input files
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// usageError marks errors in what the user gave: flags, arguments, files.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitCode reports err on stderr and returns the process's exit code.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "retrysim:", err)
	if errors.As(err, new(usageError)) {
		return exitUsage
	}
	return exitFail
}
