// Package fit turns a log of production attempts into a scenario: it reads
// attempt logs in the formats teams have (retrysim's own attempt log, OTLP
// JSON spans, CSV), streaming, and fits a server, a workload and the
// policy that ran to what the log shows (docs/replay.md).
package fit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// Kind says what a Record describes.
type Kind int

const (
	// AttemptRecord is one attempt: its fields Sent … Model are set.
	AttemptRecord Kind = iota + 1
	// OperationRecord is an operation's end: Start, End, Attempts,
	// Outcome and Reason are set.
	OperationRecord
)

// Record is one record of a log, whatever its format. A Reader fills the
// same Record on every call, so a caller that keeps one must copy it.
type Record struct {
	Kind Kind
	// Policy is the policy that ran, where the log says (a simulated log).
	Policy string
	// Op is the operation's id; Session the session's, where there is one.
	Op, Session string

	// Attempt is the attempt's number within its operation, from 1.
	Attempt int
	// Sent and Answered bound the attempt.
	Sent, Answered time.Time
	// Class is the attempt's outcome when Classified.
	Class      policies.Class
	Classified bool
	// Status is the HTTP status (0: none, such as a transport error).
	Status int
	// ServerWait is the wait the server asked for (HasServerWait).
	ServerWait    time.Duration
	HasServerWait bool
	// Backoff is the wait chosen before the next attempt (HasBackoff).
	Backoff    time.Duration
	HasBackoff bool
	// Model is the model the attempt called, if logged; FallbackTo the
	// model the operation switched to after it, if it did.
	Model, FallbackTo string

	// Start (zero if unknown) and End bound an operation; Attempts is
	// the number it sent; Outcome is success, gave_up or error; Reason is
	// why it gave up.
	Start, End time.Time
	Attempts   int
	Outcome    string
	Reason     string
}

// Reader reads a log's records one at a time, in bounded memory.
type Reader interface {
	// Next fills r with the next record; false at the end of the log or
	// on an error (Err).
	Next(r *Record) bool
	// Err is the error that stopped Next, nil at the end of the log.
	Err() error
	// Skipped is the number of bad lines skipped (lenient reading).
	Skipped() int
	// Format is the log's format (one of Formats).
	Format() string
}

// LineError is a bad line of a log: its file, line and field.
type LineError struct {
	File  string
	Line  int
	Field string // "" when the line itself is bad
	Err   error
}

func (e *LineError) Error() string {
	where := fmt.Sprintf("%s:%d", e.File, e.Line)
	if e.Field != "" {
		where += ": " + e.Field
	}
	return where + ": " + e.Err.Error()
}

func (e *LineError) Unwrap() error { return e.Err }

// Options are how a log is read.
type Options struct {
	// Name is the log's name in errors (its path).
	Name string
	// Lenient skips a bad line (counting it) instead of stopping.
	Lenient bool
	// Map is the CSV reader's column of each field (ParseMap).
	Map map[string]string
	// MaxLine bounds a line's length in bytes (0: DefaultMaxLine).
	MaxLine int
}

// DefaultMaxLine bounds a line: an OTLP JSON line holds a batch of spans.
const DefaultMaxLine = 64 << 20

// Formats are the log formats Open reads.
var Formats = []string{"attempt-log", "otlp-json", "csv"}

// Open returns a reader of r in format ("" guesses it from the first byte
// of the log: '{' is an attempt log or OTLP JSON, told apart by the first
// line's keys; anything else CSV).
func Open(r io.Reader, format string, o Options) (Reader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if format == "" {
		var err error
		if format, err = guessFormat(br); err != nil {
			return nil, fmt.Errorf("%s: %w", o.Name, err)
		}
	}
	ls := newLines(br, o)
	ls.format = format
	switch format {
	case "attempt-log":
		return &attemptLogReader{lines: ls}, nil
	case "otlp-json":
		return &otlpReader{lines: ls}, nil
	case "csv":
		return newCSVReader(ls, o.Map)
	}
	return nil, fmt.Errorf("unknown log format %q; choose one of %s", format, strings.Join(Formats, ", "))
}

// guessFormat peeks at the start of the log.
func guessFormat(br *bufio.Reader) (string, error) {
	head, err := br.Peek(4096)
	if len(head) == 0 {
		if err == nil || errors.Is(err, io.EOF) {
			return "", errors.New("the log is empty")
		}
		return "", err
	}
	s := strings.TrimLeft(strings.TrimPrefix(string(head), "\ufeff"), " \t\r\n")
	switch {
	case !strings.HasPrefix(s, "{"):
		return "csv", nil
	case strings.Contains(s, `"resourceSpans"`):
		return "otlp-json", nil
	}
	return "attempt-log", nil
}

// lines reads a log line by line, with the bookkeeping every format
// shares: the line number, the longest line, lenient skipping.
type lines struct {
	format  string
	src     io.Reader
	sc      *bufio.Scanner
	o       Options
	line    int
	err     error
	skipped int
}

func newLines(r io.Reader, o Options) *lines {
	sc := bufio.NewScanner(r)
	max := o.MaxLine
	if max <= 0 {
		max = DefaultMaxLine
	}
	sc.Buffer(make([]byte, 0, 1<<16), max)
	return &lines{src: r, sc: sc, o: o}
}

// next returns the next line that is not blank; false at the end or on
// an error (set in err).
func (l *lines) next() ([]byte, bool) {
	for l.err == nil && l.sc.Scan() {
		l.line++
		b := l.sc.Bytes()
		if l.line == 1 {
			b = bytes.TrimPrefix(b, []byte("\ufeff"))
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		return b, true
	}
	if err := l.sc.Err(); err != nil && l.err == nil {
		if errors.Is(err, bufio.ErrTooLong) {
			max := l.o.MaxLine
			if max <= 0 {
				max = DefaultMaxLine
			}
			l.err = &LineError{File: l.o.Name, Line: l.line + 1, Err: fmt.Errorf("line longer than %d bytes", max)}
		} else {
			l.err = fmt.Errorf("%s: %w", l.o.Name, err)
		}
	}
	return nil, false
}

// bad reports a bad field of the current line: with Lenient it is counted
// and false is returned (skip the line); otherwise it becomes the error.
func (l *lines) bad(field string, err error) bool {
	if l.o.Lenient {
		l.skipped++
		return false
	}
	l.err = &LineError{File: l.o.Name, Line: l.line, Field: field, Err: err}
	return true
}

func (l *lines) Err() error     { return l.err }
func (l *lines) Skipped() int   { return l.skipped }
func (l *lines) Format() string { return l.format }

// parseClass reads a class's name as policies writes it.
func parseClass(s string) (policies.Class, bool) {
	for c := policies.Success; c <= policies.Terminal; c++ {
		if c.String() == s {
			return c, true
		}
	}
	return 0, false
}

// classOfStatus is the class of an HTTP status, by the status alone (no
// header or body): what a log that records only the status supports.
func classOfStatus(status int) policies.Class {
	switch {
	case status < 400:
		return policies.Success
	case status == 429:
		return policies.RetryAfter
	case status == 529 || status == 503:
		return policies.Capacity
	case status >= 500 || status == 408 || status == 409:
		return policies.Transient
	}
	return policies.Terminal
}
