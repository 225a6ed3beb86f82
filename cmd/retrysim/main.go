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
	"runtime/debug"

	"github.com/retrysim/retrysim/runs"
)

// Exit codes.
const (
	exitOK          = 0
	exitFail        = 1   // the run failed
	exitUsage       = 2   // bad flags, arguments or input files
	exitCrash       = 3   // an internal error (a panic): a bug in retrysim
	exitInterrupted = 130 // Ctrl-C (SIGINT), as shells report 128 + 2
)

func main() {
	os.Exit(mainCode(os.Args, os.Stdout, os.Stderr))
}

// mainCode runs the CLI with signal handling and returns the exit code.
// The first Ctrl-C cancels the run, which then stops and exits 130; it also
// restores the default handling, so a second Ctrl-C kills the process at
// once. A panic on this goroutine exits 3 with its stack on stderr; panics
// of simulation runs come back as *runs.PanicError and exit 3 too.
func mainCode(args []string, stdout, stderr io.Writer) (code int) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	defer func() {
		if r := recover(); r != nil {
			code = crashed(stderr, r, debug.Stack())
		}
	}()
	return exitCode(run(ctx, args, stdout, stderr), stderr)
}

// usageError marks errors in what the user gave: flags, arguments, files.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// errInterrupted is what run returns when its context was cancelled (by
// Ctrl-C in main) before the command finished.
var errInterrupted = errors.New("interrupted")

// exitCode reports err on stderr and returns the process's exit code.
func exitCode(err error, stderr io.Writer) int {
	var p *runs.PanicError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &p):
		return crashed(stderr, p.Value, p.Stack)
	case errors.Is(err, errInterrupted):
		fmt.Fprintln(stderr, "retrysim: interrupted")
		return exitInterrupted
	}
	fmt.Fprintln(stderr, "retrysim:", err)
	if errors.As(err, new(usageError)) {
		return exitUsage
	}
	return exitFail
}

// crashed reports a panic and returns exitCrash.
func crashed(stderr io.Writer, value any, stack []byte) int {
	fmt.Fprintf(stderr, "retrysim: internal error (a bug; please report it with this output): panic: %v\n\n%s", value, stack)
	return exitCrash
}
