// Package attemptlog writes what Do did as a structured log (log/slog): one
// record per attempt, and one per operation when it ends. Its JSON lines
// (New) are a stable, versioned format, "retrysim/attempt-log/v1",
// described field by field in docs/attempt-log.md; 'retrysim compare
// --attempt-log' writes the same format for a simulated run.
//
// Like policies, attemptlog is standard library only.
package attemptlog

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/observe"
)

// Schema names the format and its version; every record carries it in its
// "schema" field. A change that a reader of v1 could misread gets a new
// version; fields may be added within a version.
const Schema = "retrysim/attempt-log/v1"

// Record kinds, the "record" field.
const (
	KindAttempt   = "attempt"
	KindOperation = "operation"
)

// MaxErrorLen bounds the "error" and "cause" fields, in bytes; a longer
// message is cut at a character boundary and ends in "...".
const MaxErrorLen = 300

// Log is an observe.Sink that writes the attempt log to a slog.Handler.
// Safe for concurrent use: share one across the operations of a process.
type Log struct {
	h   slog.Handler
	seq atomic.Uint64
	// Now is the clock of Do's records (nil: time.Now); set it before use
	// to the clock given to machine.WithClock, if any.
	Now func() time.Time
}

// New returns a Log writing the v1 JSON lines to w, one record a line, each
// written with one Write call.
func New(w io.Writer) *Log { return NewWithHandler(NewHandler(w)) }

// NewWithHandler returns a Log that hands its records to h, e.g. an
// application's own handler. Only NewHandler's output is the stable format;
// another handler adds its own fields (level, message, time).
func NewWithHandler(h slog.Handler) *Log { return &Log{h: h} }

// NewHandler returns the handler of the v1 JSON lines: slog's JSON handler
// without its time, level and message fields (every record says its time
// and kind in its own fields).
func NewHandler(w io.Writer) slog.Handler {
	return slog.NewJSONHandler(w, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey) {
			return slog.Attr{}
		}
		return a
	}})
}

// Do runs policies.Do with op and opts and logs it (see observe.Do: its
// hooks replace any set by policies.WithHooks).
func (l *Log) Do(ctx context.Context, op policies.Operation, opts ...policies.Option) error {
	t := observe.Start(ctx, l, "", l.Now)
	err := policies.Do(t.Context(), t.Wrap(op), append(opts[:len(opts):len(opts)], policies.WithHooks(t.Hooks(policies.Hooks{})))...)
	t.End(err)
	return err
}

// Start names an operation without an id by its number in this Log: "1",
// "2", ...
func (l *Log) Start(ctx context.Context, op *observe.Operation) context.Context {
	if op.ID == "" {
		op.ID = strconv.FormatUint(l.seq.Add(1), 10)
	}
	return ctx
}

// Send does nothing: an attempt is logged once answered and classified.
func (l *Log) Send(ctx context.Context, _ *observe.Operation, _ *observe.Attempt) context.Context {
	return ctx
}

// Answer writes the attempt's record.
func (l *Log) Answer(ctx context.Context, op *observe.Operation, a *observe.Attempt) {
	l.write(ctx, a.Answered, AttemptAttrs("", op.ID, a))
}

// End writes the operation's record.
func (l *Log) End(ctx context.Context, op *observe.Operation) {
	l.write(ctx, op.End, OperationAttrs("", op, true))
}

func (l *Log) write(ctx context.Context, at time.Time, attrs []slog.Attr) {
	if !l.h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	r := slog.NewRecord(at, slog.LevelInfo, "", 0)
	r.AddAttrs(attrs...)
	_ = l.h.Handle(ctx, r) // a log that cannot be written must not fail the call it logs
}

// AttemptAttrs are the fields of an attempt's record, in order. policy, if
// not empty, names the simulated policy (the simulator's logs).
func AttemptAttrs(policy, op string, a *observe.Attempt) []slog.Attr {
	attrs := head(KindAttempt, policy, op)
	attrs = append(attrs, slog.Int("attempt", a.Number))
	if a.Copy > 0 {
		attrs = append(attrs, slog.Int("copy", a.Copy))
	}
	if a.Model != "" {
		attrs = append(attrs, slog.String("model", a.Model))
	}
	attrs = append(attrs, slog.String("sent", Time(a.Sent)), slog.String("answered", Time(a.Answered)))
	if a.Classified {
		attrs = append(attrs, slog.String("class", a.Outcome.Class.String()))
	}
	if s := a.Outcome.Status; s > 0 {
		attrs = append(attrs, slog.Int("status", s))
	}
	if a.Err != nil {
		attrs = append(attrs, slog.String("error", cut(a.Err.Error())))
	}
	if w := a.Outcome.ServerWait; w > 0 {
		attrs = append(attrs, slog.Any("server_wait_ms", Millis(w)))
	}
	if a.Retry {
		attrs = append(attrs, slog.Any("backoff_ms", Millis(a.Backoff)))
	}
	if a.FallbackTo != "" {
		attrs = append(attrs, slog.String("fallback_to", a.FallbackTo))
	}
	if a.InputTokens > 0 {
		attrs = append(attrs, slog.Int("input_tokens", a.InputTokens))
	}
	if a.OutputTokens > 0 {
		attrs = append(attrs, slog.Int("output_tokens", a.OutputTokens))
	}
	return attrs
}

// OperationAttrs are the fields of an operation's record, in order.
// withStart says op.Start is known.
func OperationAttrs(policy string, op *observe.Operation, withStart bool) []slog.Attr {
	attrs := head(KindOperation, policy, op.ID)
	if withStart {
		attrs = append(attrs, slog.String("start", Time(op.Start)))
	}
	attrs = append(attrs, slog.String("end", Time(op.End)), slog.Int("attempts", op.Attempts))
	switch e := op.GaveUp; {
	case op.Err == nil && e == nil:
		attrs = append(attrs, slog.String("outcome", "success"))
	case e != nil:
		attrs = append(attrs, slog.String("outcome", "gave_up"), slog.String("reason", e.Reason.String()))
		if e.Cause != nil {
			attrs = append(attrs, slog.String("cause", cut(e.Cause.Error())))
		}
	default:
		// Not a *policies.Error: Do refused to start (a nil operation, too
		// many coordinators).
		attrs = append(attrs, slog.String("outcome", "error"), slog.String("cause", cut(op.Err.Error())))
	}
	return attrs
}

func head(kind, policy, op string) []slog.Attr {
	attrs := make([]slog.Attr, 0, 16)
	attrs = append(attrs, slog.String("schema", Schema), slog.String("record", kind))
	if policy != "" {
		attrs = append(attrs, slog.String("policy", policy))
	}
	return append(attrs, slog.String("op", op))
}

// Time formats t as the log writes times: RFC 3339 in UTC with as many
// fractional digits as needed, up to nanoseconds.
func Time(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Millis formats d as the log writes durations: a JSON number of
// milliseconds, exact to the nanosecond (up to six decimals, no trailing
// zeros), e.g. 1500, 0.25, 812.345678.
func Millis(d time.Duration) json.Number {
	neg := d < 0
	if neg {
		d = -d
	}
	s := strconv.FormatInt(int64(d/time.Millisecond), 10)
	if frac := int64(d % time.Millisecond); frac != 0 {
		f := strconv.FormatInt(frac+1_000_000, 10)[1:] // six digits
		for f[len(f)-1] == '0' {
			f = f[:len(f)-1]
		}
		s += "." + f
	}
	if neg {
		s = "-" + s
	}
	return json.Number(s)
}

// cut bounds an error message to MaxErrorLen bytes.
func cut(s string) string {
	if len(s) <= MaxErrorLen {
		return s
	}
	n := MaxErrorLen - 3
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
