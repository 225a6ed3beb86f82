package machine

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Rendering is the reverse of classification: Render turns an Outcome into
// the HTTP response an Anthropic-style API sends for it, and
// ClassifyResponse reads that response back into the same Outcome (see
// Render for which outcomes survive the trip unchanged). A server model
// (package serve) uses it to answer real clients; the property test in
// render_test.go keeps the two directions in step.

// Rendered is an Outcome as an HTTP response.
type Rendered struct {
	// Status is the HTTP status code.
	Status int
	// Header holds content-type (for a failure) and, where they apply,
	// retry-after, retry-after-ms and x-should-retry. Never nil.
	Header http.Header
	// Body is the JSON error object of a failure, nil for a success: the
	// caller writes the successful answer itself.
	Body []byte
}

// Default statuses, per class, for an Outcome whose own status cannot carry
// its class (or is 0).
const (
	defaultSuccessStatus   = http.StatusOK
	defaultCapacityStatus  = 529
	defaultTransientStatus = http.StatusInternalServerError
	defaultTerminalStatus  = http.StatusBadRequest
)

// Render returns the response that carries o, as the Anthropic API shapes
// its responses:
//
//   - Success: o.Status if it is 2xx or 3xx, else 200; no body.
//   - RetryAfter: 429 with a rate_limit_error body.
//   - Capacity: o.Status if it is 5xx, else 529; an overloaded_error body
//     (which is what makes a 500 or 502 read as Capacity).
//   - Transient: o.Status if it is 4xx or 5xx other than 429, 503 and 529
//     (which always read as something else), else 500; the body's error
//     type follows the status (api_error, timeout_error for 408 and 504,
//     invalid_request_error and its kin for 4xx). A status that would read
//     as Terminal carries x-should-retry: true.
//   - Terminal: o.Status if it is 4xx or 5xx, else 400. A 429 becomes a
//     spend-limit rejection (error.details.error_code
//     enforced_spend_limit_reached, no retry-after), as the API sends it; a
//     status that would read as retryable (408, 409, 5xx) carries
//     x-should-retry: false.
//
// o.Hint, if set, is sent as x-should-retry instead; a Terminal 429 with
// HintNoRetry is a rate_limit_error with x-should-retry: false, not a
// spend limit.
//
// Every failure but Terminal carries o.ServerWait, if it is positive, as
// retry-after in whole seconds rounded up (so that a client reading only
// that header never waits too little) and, if the wait is not a whole
// number of seconds, as retry-after-ms too, exact to the nanosecond
// (decimal milliseconds). Clients read retry-after-ms first.
//
// ClassifyResponse(r.Status, r.Header, r.Body, now) gives back o's class
// for every o with a known class, and gives back o itself when o's status
// is one Render keeps (see above), its ServerWait is between 0 and
// MaxParsedWait, and it is 0 for Success and Terminal, which carry no
// wait.
func Render(o Outcome) Rendered {
	r := Rendered{Header: http.Header{}}
	status, hint := wireStatus(o)
	r.Status = status
	if o.Class == Success {
		return r
	}
	switch hint {
	case HintRetry:
		r.Header.Set("x-should-retry", "true")
	case HintNoRetry:
		r.Header.Set("x-should-retry", "false")
	}
	var code string
	errType := errorTypeFor(r.Status)
	switch {
	case o.Class == Capacity:
		errType = "overloaded_error"
	case o.Class != RetryAfter && r.Status == http.StatusTooManyRequests && hint == NoHint:
		code = CodeEnforcedSpendLimit // only a Terminal 429 gets here
	}
	r.Header.Set("content-type", "application/json")
	r.Body = errorBody(errType, errorMessage(errType, code), code)
	if o.Class == RetryAfter || o.Class == Capacity || o.Class == Transient {
		setServerWait(r.Header, o.ServerWait)
	}
	return r
}

// wireStatus returns the status Render sends for o and the x-should-retry
// it adds (see Render): o.Hint if set, else what the class needs where the
// status alone would read otherwise.
func wireStatus(o Outcome) (int, Hint) {
	status := o.Status
	if status < 100 || status > 599 {
		status = 0
	}
	hint := NoHint
	switch o.Class {
	case Success:
		if status >= 200 && status < 400 {
			return status, NoHint
		}
		return defaultSuccessStatus, NoHint
	case RetryAfter:
		status = http.StatusTooManyRequests
	case Capacity:
		if status < 500 {
			status = defaultCapacityStatus
		}
	case Transient:
		if status < 400 || status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable || status == 529 {
			status = defaultTransientStatus
		}
		if !retriedStatus(status) {
			hint = HintRetry
		}
	default: // Terminal, and any class this package does not know
		if status < 400 {
			status = defaultTerminalStatus
		}
		if status != http.StatusTooManyRequests && retriedStatus(status) {
			hint = HintNoRetry
		}
	}
	if o.Hint != NoHint {
		hint = o.Hint
	}
	return status, hint
}

// errorTypeFor returns the API error type the Anthropic API uses for a
// status; other 4xx statuses get invalid_request_error, as the API
// documents, and other 5xx statuses api_error.
func errorTypeFor(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusPaymentRequired:
		return "billing_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusRequestTimeout, http.StatusGatewayTimeout:
		return "timeout_error"
	case http.StatusServiceUnavailable, 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// errorMessage is the human-readable message of an error body.
func errorMessage(errType, code string) string {
	if code != "" {
		return "The spend limit has been reached; requests fail until it is raised."
	}
	switch errType {
	case "overloaded_error":
		return "Overloaded"
	case "rate_limit_error":
		return "This request would exceed the rate limit; wait as retry-after says before sending again."
	case "api_error":
		return "Internal server error"
	case "timeout_error":
		return "The request timed out"
	case "authentication_error":
		return "Invalid API key"
	case "billing_error":
		return "Billing problem"
	case "permission_error":
		return "Not allowed"
	case "not_found_error":
		return "Not found"
	case "request_too_large":
		return "The request is too large"
	}
	return "Invalid request"
}

// ErrorBody returns an API error object with the given type and message:
// {"type":"error","error":{"type":...,"message":...}}.
func ErrorBody(errType, message string) []byte {
	return errorBody(errType, message, "")
}

func errorBody(errType, message, code string) []byte {
	type details struct {
		ErrorCode string `json:"error_code"`
	}
	type apiError struct {
		Type    string   `json:"type"`
		Message string   `json:"message"`
		Details *details `json:"details,omitempty"`
	}
	v := struct {
		Type  string   `json:"type"`
		Error apiError `json:"error"`
	}{Type: "error", Error: apiError{Type: errType, Message: message}}
	if code != "" {
		v.Error.Details = &details{ErrorCode: code}
	}
	return mustMarshal(v)
}

// setServerWait writes a positive wait as retry-after (whole seconds,
// rounded up) and, when it has a fraction of a second, retry-after-ms.
func setServerWait(h http.Header, d time.Duration) {
	if d <= 0 {
		return
	}
	secs := d / time.Second
	if d%time.Second != 0 {
		secs++
		h.Set("retry-after-ms", FormatMs(d))
	}
	h.Set("retry-after", strconv.FormatInt(int64(secs), 10))
}

// FormatMs writes a duration as decimal milliseconds, exact to the
// nanosecond and without trailing zeros: 1500ms is "1500", 250.5µs is
// "0.2505". ParseRetryAfterMs reads it back exactly. Negative durations
// give "0".
func FormatMs(d time.Duration) string {
	if d <= 0 {
		return "0"
	}
	s := strconv.FormatInt(int64(d/time.Millisecond), 10)
	frac := int64(d % time.Millisecond)
	if frac == 0 {
		return s
	}
	f := strconv.FormatInt(frac+1_000_000, 10)[1:] // six digits, leading zeros kept
	return s + "." + strings.TrimRight(f, "0")
}

// RenderEvent returns the server-sent event that carries a failure inside a
// streamed 200 response: event "error" with an API error object whose type
// gives the class back through ClassifyEvent (overloaded_error for
// Capacity, rate_limit_error for RetryAfter, api_error for Transient,
// invalid_request_error for Terminal). An event has no headers, so no wait
// travels with it. ok is false for Success, which has no error event.
func RenderEvent(o Outcome) (event string, data []byte, ok bool) {
	var errType string
	switch o.Class {
	case Success:
		return "", nil, false
	case Capacity:
		errType = "overloaded_error"
	case RetryAfter:
		errType = "rate_limit_error"
	case Transient:
		errType = "api_error"
	default:
		errType = "invalid_request_error"
	}
	return "error", errorBody(errType, errorMessage(errType, ""), ""), true
}
