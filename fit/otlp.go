package fit

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// OTLP JSON: each line is one ExportTraceServiceRequest, as the
// OpenTelemetry collector's file exporter writes them. A span is an attempt
// when it is named retry.attempt (policies/otelretry) or carries an HTTP
// status (http.response.status_code, or the older http.status_code) or an
// error.type; a span named retry.operation is an operation's end; others
// are passed over. The operation of an attempt is retry.operation.id, or
// else its parent span (the operation's span), or else its trace.
// Attributes read (semantic conventions first, then otelretry's):
//
//	attempt number   retry.attempt, else http.request.resend_count + 1, else 1
//	status           http.response.status_code, http.status_code
//	class            retry.class, else from the status (429 retry-after,
//	                 503/529 capacity, other 5xx/408/409 transient, other
//	                 4xx terminal), else transient for an error.type
//	server wait      retry.server_wait (seconds)
//	backoff          retry.backoff (seconds)
//	model            retry.model, gen_ai.request.model
//	session          session.id
//	operation end    retry.attempts, retry.outcome, retry.stop_reason

type otlpRequest struct {
	ResourceSpans []struct {
		ScopeSpans []struct {
			Spans []otlpSpan `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
}

type otlpSpan struct {
	TraceID      string     `json:"traceId"`
	SpanID       string     `json:"spanId"`
	ParentSpanID string     `json:"parentSpanId"`
	Name         string     `json:"name"`
	Start        otlpUint   `json:"startTimeUnixNano"`
	End          otlpUint   `json:"endTimeUnixNano"`
	Attributes   []otlpAttr `json:"attributes"`
}

type otlpAttr struct {
	Key   string `json:"key"`
	Value struct {
		String *string   `json:"stringValue"`
		Int    *otlpUint `json:"intValue"`
		Double *float64  `json:"doubleValue"`
	} `json:"value"`
}

// otlpUint is a 64-bit integer that protobuf's JSON writes as a string
// (a number is accepted too). Set is false when it was absent.
type otlpUint struct {
	V   int64
	Set bool
}

func (u *otlpUint) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' {
		s = s[1 : len(s)-1]
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("%s is not an integer", b)
	}
	u.V, u.Set = v, true
	return nil
}

type otlpReader struct {
	*lines
	pending []Record // the attempts of the current line not yet returned
}

func (o *otlpReader) Next(r *Record) bool {
	for len(o.pending) == 0 {
		b, ok := o.next()
		if !ok {
			return false
		}
		var req otlpRequest
		if err := json.Unmarshal(b, &req); err != nil {
			if o.bad(jsonField(err), jsonProblem(err)) {
				return false
			}
			continue
		}
		if field, err := o.spans(&req); err != nil {
			o.pending = o.pending[:0]
			if o.bad(field, err) {
				return false
			}
		}
	}
	*r = o.pending[0]
	o.pending = o.pending[1:]
	return true
}

// spans appends the records of one request's spans to pending.
func (o *otlpReader) spans(req *otlpRequest) (string, error) {
	for i, rs := range req.ResourceSpans {
		for j, ss := range rs.ScopeSpans {
			for k := range ss.Spans {
				var rec Record
				ok, field, err := spanRecord(&ss.Spans[k], &rec)
				if err != nil {
					return fmt.Sprintf("resourceSpans[%d].scopeSpans[%d].spans[%d].%s", i, j, k, field), err
				}
				if ok {
					o.pending = append(o.pending, rec)
				}
			}
		}
	}
	return "", nil
}

// spanRecord turns a span into a record; false for a span that is
// neither an attempt nor an operation.
func spanRecord(sp *otlpSpan, r *Record) (bool, string, error) {
	a := map[string]*otlpAttr{}
	for i := range sp.Attributes {
		a[sp.Attributes[i].Key] = &sp.Attributes[i]
	}
	status, hasStatus, field, err := intAttr(a, "http.response.status_code", "http.status_code")
	if err != nil {
		return false, field, err
	}
	_, hasErrType := a["error.type"]
	isOp := sp.Name == "retry.operation"
	if !isOp && sp.Name != "retry.attempt" && !hasStatus && !hasErrType {
		return false, "", nil
	}
	if !sp.Start.Set || !sp.End.Set {
		return false, "startTimeUnixNano", errors.New("missing (or endTimeUnixNano)")
	}
	if sp.End.V < sp.Start.V {
		return false, "endTimeUnixNano", errors.New("is before startTimeUnixNano")
	}
	start, end := time.Unix(0, sp.Start.V).UTC(), time.Unix(0, sp.End.V).UTC()
	*r = Record{Op: sp.TraceID}
	if sp.ParentSpanID != "" && !isOp {
		r.Op = sp.ParentSpanID
	}
	if isOp {
		r.Op = sp.SpanID
	}
	if id := strAttr(a, "retry.operation.id"); id != "" {
		r.Op = id
	}
	if r.Op == "" {
		return false, "traceId", errors.New("missing: the attempt's operation is unknown")
	}
	r.Session = strAttr(a, "session.id")
	if isOp {
		r.Kind, r.Start, r.End = OperationRecord, start, end
		n, _, field, err := intAttr(a, "retry.attempts")
		if err != nil {
			return false, field, err
		}
		r.Attempts = int(n)
		r.Outcome, r.Reason = strAttr(a, "retry.outcome"), strAttr(a, "retry.stop_reason")
		if r.Outcome == "" {
			r.Outcome = "success"
		}
		return true, "", nil
	}
	r.Kind, r.Sent, r.Answered = AttemptRecord, start, end
	r.Attempt = 1
	if n, ok, field, err := intAttr(a, "retry.attempt"); err != nil {
		return false, field, err
	} else if ok {
		r.Attempt = int(n)
	} else if n, ok, field, err := intAttr(a, "http.request.resend_count"); err != nil {
		return false, field, err
	} else if ok {
		r.Attempt = int(n) + 1
	}
	if r.Attempt < 1 || r.Attempt > math.MaxInt32 {
		return false, "attributes[retry.attempt]", fmt.Errorf("attempt %d is out of range", r.Attempt)
	}
	if hasStatus {
		if status < 100 || status > 999 {
			return false, "attributes[http.response.status_code]", fmt.Errorf("%d is not an HTTP status", status)
		}
		r.Status = int(status)
	}
	if c := strAttr(a, "retry.class"); c != "" {
		if r.Class, r.Classified = parseClass(c); !r.Classified {
			return false, "attributes[retry.class]", fmt.Errorf("unknown class %q", c)
		}
	} else if hasStatus {
		r.Class, r.Classified = classOfStatus(r.Status), true
	} else if hasErrType {
		r.Class, r.Classified = policies.Transient, true
	}
	for _, w := range []struct {
		key  string
		d    *time.Duration
		have *bool
	}{{"retry.server_wait", &r.ServerWait, &r.HasServerWait}, {"retry.backoff", &r.Backoff, &r.HasBackoff}} {
		if at := a[w.key]; at != nil {
			sec := math.NaN()
			if at.Value.Double != nil {
				sec = *at.Value.Double
			} else if at.Value.Int != nil {
				sec = float64(at.Value.Int.V)
			}
			d, ok := millis(sec * 1000)
			if !ok {
				return false, "attributes[" + w.key + "]", fmt.Errorf("not a number of seconds between 0 and %v", maxWait)
			}
			*w.d, *w.have = d, true
		}
	}
	r.Model = strAttr(a, "retry.model")
	if r.Model == "" {
		r.Model = strAttr(a, "gen_ai.request.model")
	}
	return true, "", nil
}

// intAttr reads the first of keys that is set, as an integer.
func intAttr(a map[string]*otlpAttr, keys ...string) (int64, bool, string, error) {
	for _, k := range keys {
		at := a[k]
		if at == nil {
			continue
		}
		switch {
		case at.Value.Int != nil:
			return at.Value.Int.V, true, "", nil
		case at.Value.String != nil:
			v, err := strconv.ParseInt(*at.Value.String, 10, 64)
			if err == nil {
				return v, true, "", nil
			}
		}
		return 0, false, "attributes[" + k + "]", errors.New("not an integer")
	}
	return 0, false, "", nil
}

// strAttr reads a string attribute ("" when absent).
func strAttr(a map[string]*otlpAttr, key string) string {
	if at := a[key]; at != nil && at.Value.String != nil {
		return *at.Value.String
	}
	return ""
}
