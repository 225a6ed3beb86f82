package policies

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// MaxServerWait is the longest server wait the header parsers return. A
// retry-after-ms or retry-after value above it is cut to MaxServerWait, which
// keeps the arithmetic on waits free of overflow. Any budget shorter than
// MaxServerWait therefore stops at once on such a hint, which is what a
// server asking for more than a day means in practice.
const MaxServerWait = 24 * time.Hour

// Spend-limit error codes: an error (a 429, or an error event in a streamed
// response) whose body carries one of these in error.details.error_code will
// fail until a person raises the limit.
const (
	CodeEnforcedSpendLimit = "enforced_spend_limit_reached"
	CodeContractSpendLimit = "contract_spend_limit_reached"
)

// Classifier sorts the error an attempt returned into an Outcome. err is
// never nil. now is the time the attempt ended; it is used only to turn an
// HTTP-date retry-after into a wait. A Classifier must not block; it may be
// called from many goroutines at once.
//
// To extend the default rules, handle the errors you know and fall back to
// ClassifyError:
//
//	func(err error, now time.Time) policies.Outcome {
//		if errors.Is(err, errBusy) {
//			return policies.Outcome{Class: policies.Capacity}
//		}
//		return policies.ClassifyError(err, now)
//	}
type Classifier func(err error, now time.Time) Outcome

// HTTPError is a failed HTTP attempt: a response whose status or body says
// the request did not succeed. Transport returns it to Do for responses it
// may retry; operations that call an HTTP API directly can return it too, so
// that ClassifyError reads the status, headers and body.
type HTTPError struct {
	StatusCode int
	Header     http.Header
	// Body is the start of the response body (Transport reads at most
	// MaxErrorBody bytes); it may be empty.
	Body []byte
}

func (e *HTTPError) Error() string {
	msg := "http " + strconv.Itoa(e.StatusCode)
	if text := http.StatusText(e.StatusCode); text != "" {
		msg += " " + text
	}
	body := strings.TrimSpace(string(e.Body))
	if len(body) > 200 {
		body = body[:200] + "..."
	}
	if body != "" {
		msg += ": " + body
	}
	return msg
}

// ClassifyError is the default Classifier. In order:
//
//   - nil is Success.
//   - an *HTTPError (anywhere in the chain) is classified by ClassifyResponse.
//   - context.Canceled is Terminal; context.DeadlineExceeded is Transient: it
//     is taken to be the timeout of one attempt. The caller's own
//     cancellation or deadline is never retried regardless: Do checks the
//     caller's context itself.
//   - errors that a retry cannot fix are Terminal: a TLS certificate that
//     does not verify (x509 and tls.CertificateVerificationError), a plain
//     HTTP answer to an HTTPS request (a tls.RecordHeaderError, "server gave
//     HTTP response to HTTPS client"), an unsupported protocol scheme, and a
//     host name that does not exist.
//   - connection errors are Transient: any net.Error that reports a timeout,
//     a *net.OpError (dial, read or write failed), a DNS failure other than
//     "not found", connection reset, refused or aborted, broken pipe,
//     network or host unreachable, and io.EOF or io.ErrUnexpectedEOF (the
//     connection ended before a whole response).
//   - anything else is Terminal: an error nobody recognised is not retried.
//     Being a net.Error is not enough: every *url.Error is one, whatever it
//     wraps, so Do looks inside it. That includes the Anthropic Go SDK's
//     *anthropic.Error, which this package does not import: for it, use
//     Classify from github.com/retrysim/retrysim/policies/anthropicsdk.
func ClassifyError(err error, now time.Time) Outcome {
	if err == nil {
		return Outcome{Class: Success}
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return ClassifyResponse(he.StatusCode, he.Header, he.Body, now)
	}
	if errors.Is(err, context.Canceled) {
		return Outcome{Class: Terminal}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Outcome{Class: Transient}
	}
	if isPermanentTransportError(err) {
		return Outcome{Class: Terminal}
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		if dnsErr.IsNotFound {
			return Outcome{Class: Terminal} // the name does not exist; waiting will not create it
		}
		return Outcome{Class: Transient}
	}
	if isConnectionError(err) {
		return Outcome{Class: Transient}
	}
	return Outcome{Class: Terminal}
}

// isConnectionError reports whether err is a failure of the connection that
// a new attempt may not meet: a timeout, a failed dial, read or write, or the
// connection ending early.
func isConnectionError(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return true
	}
	for _, target := range transientErrs {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

var transientErrs = []error{
	syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED, syscall.EPIPE,
	syscall.ENETUNREACH, syscall.EHOSTUNREACH, syscall.ENETDOWN, syscall.ETIMEDOUT,
	io.EOF, io.ErrUnexpectedEOF,
}

// isPermanentTransportError reports whether err is a transport failure that
// the same request will meet again: a certificate that does not verify, an
// HTTPS request answered in plain HTTP, an unsupported URL scheme.
func isPermanentTransportError(err error) bool {
	var (
		unknownAuthority x509.UnknownAuthorityError
		invalidCert      x509.CertificateInvalidError
		hostname         x509.HostnameError
		systemRoots      x509.SystemRootsError
		verification     *tls.CertificateVerificationError
		recordHeader     tls.RecordHeaderError
	)
	if errors.As(err, &unknownAuthority) || errors.As(err, &invalidCert) ||
		errors.As(err, &hostname) || errors.As(err, &systemRoots) ||
		errors.As(err, &verification) || errors.As(err, &recordHeader) {
		return true
	}
	// net/http reports these two as plain strings inside a *url.Error.
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		msg := ue.Err.Error()
		if strings.Contains(msg, "unsupported protocol scheme") ||
			strings.Contains(msg, "server gave HTTP response to HTTPS client") {
			return true
		}
	}
	return false
}

// ClassifyResponse classifies an HTTP response from its status, headers and
// body. body is the start of the response body, or nil if it was not read;
// for a status below 400 it is read only for an error carried in a 200 (see
// below). now is used only to read an HTTP-date retry-after.
//
// Rules, in order:
//
//   - A body with error.details.error_code "enforced_spend_limit_reached" or
//     "contract_spend_limit_reached" is Terminal, whatever the status (a 429,
//     or an error event in a streamed 200) and whatever the headers say: it
//     fails until a person acts.
//   - A status below 400 is Success, unless the body is an API error object
//     ({"type":"error","error":{"type":...}}), as an SSE error event in a
//     streamed 200 response is: then the error type decides, as in
//     ClassifyErrorType.
//   - x-should-retry: false makes any other failure Terminal; true makes a
//     status that would be Terminal Transient (a 429 stays RetryAfter). Other
//     values are ignored.
//   - 429 is RetryAfter. Without a wait hint its ServerWait is 0, so the
//     backoff alone sets the wait.
//   - 529 and 503, and any 5xx whose body type is overloaded_error, are
//     Capacity.
//   - 408, 409 and every other 5xx are Transient.
//   - Everything else (400, 401, 402, 403, 404, 413, 422, unknown) is Terminal.
//
// Every failure that is not Terminal carries the server wait from
// ServerWait, if the headers give one.
func ClassifyResponse(status int, header http.Header, body []byte, now time.Time) Outcome {
	errType, errCode := parseErrorBody(body)
	out := Outcome{Status: status}
	switch {
	case isSpendLimit(errCode):
		out.Class = Terminal
		return out
	case status < 400 && errType == "":
		out.Class = Success
		return out
	case status < 400:
		out.Class = ClassifyErrorType(errType)
	case status == http.StatusTooManyRequests:
		out.Class = RetryAfter
	case status == 529 || status == http.StatusServiceUnavailable || (status >= 500 && errType == "overloaded_error"):
		out.Class = Capacity
	case status == http.StatusRequestTimeout || status == http.StatusConflict || status >= 500 && status <= 599:
		out.Class = Transient
	default:
		out.Class = Terminal
	}
	if v, ok := ParseShouldRetry(header.Get("x-should-retry")); ok {
		switch {
		case !v:
			out.Class = Terminal
		case out.Class == Terminal:
			out.Class = Transient
		}
	}
	if out.Class != Terminal {
		out.ServerWait, _ = ServerWait(header, now)
	}
	return out
}

// ClassifyErrorType maps an API error type (error.type in an error body or
// an SSE error event) to a class: overloaded_error is Capacity; api_error and
// timeout_error are Transient; rate_limit_error is RetryAfter (with no wait:
// an event carries no headers); anything else is Terminal.
func ClassifyErrorType(errType string) Class {
	switch errType {
	case "overloaded_error":
		return Capacity
	case "api_error", "timeout_error":
		return Transient
	case "rate_limit_error":
		return RetryAfter
	default:
		return Terminal
	}
}

// ClassifyEvent classifies one server-sent event of a streamed response:
// an "error" event by the error type in its JSON data (as ClassifyErrorType;
// data that is not an error object is Terminal; a spend-limit error_code is
// Terminal whatever the type), every other event Success.
func ClassifyEvent(event string, data []byte) Outcome {
	if strings.TrimSpace(event) != "error" {
		return Outcome{Class: Success, Status: http.StatusOK}
	}
	errType, code := parseErrorBody(data)
	if isSpendLimit(code) {
		return Outcome{Class: Terminal, Status: http.StatusOK}
	}
	return Outcome{Class: ClassifyErrorType(errType), Status: http.StatusOK}
}

// isSpendLimit reports whether an error code names a spend limit.
func isSpendLimit(code string) bool {
	return code == CodeEnforcedSpendLimit || code == CodeContractSpendLimit
}

// parseErrorBody returns error.type and error.details.error_code of an API
// error body, or empty strings when body is not one. It never fails: a body
// that is not JSON simply carries no type.
func parseErrorBody(body []byte) (errType, code string) {
	var v struct {
		Type  string `json:"type"`
		Error *struct {
			Type    string `json:"type"`
			Details *struct {
				ErrorCode string `json:"error_code"`
			} `json:"details"`
		} `json:"error"`
	}
	if len(body) == 0 || json.Unmarshal(body, &v) != nil || v.Error == nil {
		return "", ""
	}
	if v.Type != "" && v.Type != "error" {
		return "", ""
	}
	errType = v.Error.Type
	if v.Error.Details != nil {
		code = v.Error.Details.ErrorCode
	}
	return errType, code
}

// ParseShouldRetry reads an x-should-retry header value: "true" or "false"
// (any case, surrounding spaces ignored). ok is false for anything else,
// including an empty value, which means the header gives no instruction.
func ParseShouldRetry(v string) (retry, ok bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// ServerWait returns the wait the headers ask for and whether they ask for
// one. retry-after-ms is read first; if it is absent or malformed,
// retry-after is read. Both are cut to MaxServerWait. now is the time the
// response arrived; it is used only for an HTTP-date retry-after.
func ServerWait(header http.Header, now time.Time) (time.Duration, bool) {
	if header == nil {
		return 0, false
	}
	if d, ok := ParseRetryAfterMs(header.Get("retry-after-ms")); ok {
		return d, true
	}
	return ParseRetryAfter(header.Get("retry-after"), now)
}

// ParseRetryAfterMs reads a retry-after-ms value: non-negative decimal
// milliseconds, fractions allowed ("250", "1500.5"). Spaces around the value
// are ignored. Signs, exponents, hex, "Inf" and "NaN" are malformed and give
// ok == false. Values above MaxServerWait give MaxServerWait; precision
// beyond a nanosecond rounds up, so a wait is never shortened.
func ParseRetryAfterMs(v string) (time.Duration, bool) {
	return parseDecimal(strings.TrimSpace(v), time.Millisecond)
}

// ParseRetryAfter reads a retry-after value: either non-negative decimal
// seconds, fractions allowed ("2", "0.5"), or an HTTP-date (any form
// http.ParseTime accepts). A date gives the time from now until then; a date
// at or before now gives 0 with ok == true (retry without waiting for the
// server). Results are cut to MaxServerWait. Anything else, including a
// negative number, is malformed and gives ok == false.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if d, ok := parseDecimal(v, time.Second); ok {
		return d, true
	}
	if v == "" || v[0] < 'A' {
		return 0, false // not a date either; saves a parse of "-1"
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if !t.After(now) {
		return 0, true
	}
	return min(t.Sub(now), MaxServerWait), true
}

// parseDecimal reads digits[.digits] as a count of unit, exactly: no floating
// point, saturating at MaxServerWait, rounding leftover precision up.
func parseDecimal(s string, unit time.Duration) (time.Duration, bool) {
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" && frac == "" || !allDigits(intPart) || !allDigits(frac) {
		return 0, false
	}
	limit := int64(MaxServerWait / unit)
	var whole int64
	for i := 0; i < len(intPart); i++ {
		whole = whole*10 + int64(intPart[i]-'0')
		if whole > limit {
			return MaxServerWait, true
		}
	}
	d := time.Duration(whole) * unit
	// The fraction: each digit is worth unit/10^k; keep what fits in
	// nanoseconds and round any remainder up.
	step := unit
	for i := 0; i < len(frac); i++ {
		digit := time.Duration(frac[i] - '0')
		if step < 10 {
			if strings.Trim(frac[i:], "0") != "" {
				d++
			}
			break
		}
		step /= 10
		d += digit * step
	}
	return min(d, MaxServerWait), true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
