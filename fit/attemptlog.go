package fit

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// attemptLogSchema is the version of policies/attemptlog's format read here.
const attemptLogSchema = "retrysim/attempt-log/v1"

// attemptLogLine is one line of an attempt log (docs/attempt-log.md);
// fields it does not know are ignored, as v1 allows.
type attemptLogLine struct {
	Schema     string      `json:"schema"`
	Record     string      `json:"record"`
	Policy     string      `json:"policy"`
	Op         *string     `json:"op"`
	Session    string      `json:"session"`
	Attempt    int         `json:"attempt"`
	Copy       int         `json:"copy"`
	Model      string      `json:"model"`
	FallbackTo string      `json:"fallback_to"`
	Sent       string      `json:"sent"`
	Answered   string      `json:"answered"`
	Class      string      `json:"class"`
	Status     int         `json:"status"`
	ServerWait json.Number `json:"server_wait_ms"`
	Backoff    json.Number `json:"backoff_ms"`
	Start      string      `json:"start"`
	End        string      `json:"end"`
	Attempts   int         `json:"attempts"`
	Outcome    string      `json:"outcome"`
	Reason     string      `json:"reason"`
}

type attemptLogReader struct {
	*lines
	l attemptLogLine
}

func (a *attemptLogReader) Next(r *Record) bool {
	for {
		b, ok := a.next()
		if !ok {
			return false
		}
		a.l = attemptLogLine{}
		if err := json.Unmarshal(b, &a.l); err != nil {
			if a.bad(jsonField(err), jsonProblem(err)) {
				return false
			}
			continue
		}
		if field, err := a.fill(r); err != nil {
			if a.bad(field, err) {
				return false
			}
			continue
		}
		if a.l.Copy > 0 {
			continue // a hedged copy: the attempt it copies is the arrival
		}
		return true
	}
}

// fill sets r from the line just decoded, or names the field that is wrong.
func (a *attemptLogReader) fill(r *Record) (string, error) {
	l := &a.l
	if l.Schema != attemptLogSchema {
		return "schema", fmt.Errorf("is %q; this reader knows %s", l.Schema, attemptLogSchema)
	}
	if l.Op == nil || *l.Op == "" {
		return "op", errors.New("missing or empty")
	}
	*r = Record{Policy: l.Policy, Op: *l.Op, Session: l.Session}
	var err error
	switch l.Record {
	case "attempt":
		r.Kind = AttemptRecord
		if l.Attempt < 1 {
			return "attempt", fmt.Errorf("must be >= 1 (got %d)", l.Attempt)
		}
		r.Attempt, r.Model, r.Status, r.FallbackTo = l.Attempt, l.Model, l.Status, l.FallbackTo
		if r.Sent, err = parseTime(l.Sent); err != nil {
			return "sent", err
		}
		if r.Answered, err = parseTime(l.Answered); err != nil {
			return "answered", err
		}
		if r.Answered.Before(r.Sent) {
			return "answered", fmt.Errorf("is before sent (%s)", l.Sent)
		}
		if l.Status < 0 || l.Status > 999 {
			return "status", fmt.Errorf("%d is not an HTTP status", l.Status)
		}
		if l.Class != "" {
			if r.Class, r.Classified = parseClass(l.Class); !r.Classified {
				return "class", fmt.Errorf("unknown class %q", l.Class)
			}
		}
		if r.ServerWait, r.HasServerWait, err = parseMillis(l.ServerWait); err != nil {
			return "server_wait_ms", err
		}
		if r.Backoff, r.HasBackoff, err = parseMillis(l.Backoff); err != nil {
			return "backoff_ms", err
		}
	case "operation":
		r.Kind = OperationRecord
		r.Attempts, r.Outcome, r.Reason = l.Attempts, l.Outcome, l.Reason
		if l.Start != "" {
			if r.Start, err = parseTime(l.Start); err != nil {
				return "start", err
			}
		}
		if r.End, err = parseTime(l.End); err != nil {
			return "end", err
		}
		switch l.Outcome {
		case "success", "gave_up", "error":
		default:
			return "outcome", fmt.Errorf("unknown outcome %q (success, gave_up or error)", l.Outcome)
		}
	default:
		return "record", fmt.Errorf("unknown record %q (attempt or operation)", l.Record)
	}
	return "", nil
}

// parseTime reads an RFC 3339 time.
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, errors.New("missing")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time", s)
	}
	return t, nil
}

// maxWait bounds a logged duration, as scenario durations are bounded.
const maxWait = 1000 * time.Hour

// parseMillis reads a duration in milliseconds; false when absent.
func parseMillis(n json.Number) (time.Duration, bool, error) {
	if n == "" {
		return 0, false, nil
	}
	ms, err := strconv.ParseFloat(string(n), 64)
	d, ok := millis(ms)
	if err != nil || !ok {
		return 0, false, fmt.Errorf("%s is not a duration in milliseconds between 0 and %v", n, maxWait)
	}
	return d, true, nil
}

// millis converts milliseconds to a duration, if in [0, maxWait].
func millis(ms float64) (time.Duration, bool) {
	if !(ms >= 0 && ms <= float64(maxWait/time.Millisecond)) {
		return 0, false
	}
	return time.Duration(math.Round(ms * 1e6)), true
}

// jsonField names the field a JSON decoding error is about, if it says.
func jsonField(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field
	}
	return ""
}

// jsonProblem is a JSON decoding error without the Go type names.
func jsonProblem(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("a JSON %s where the field wants another type", te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("not JSON: %v (at byte %d)", se, se.Offset)
	}
	return fmt.Errorf("not a JSON object: %v", err)
}
