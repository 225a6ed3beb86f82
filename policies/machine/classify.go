package machine

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

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

// maxQuotedBody is the most of a body, in bytes, that HTTPError's message
// quotes.
const maxQuotedBody = 200

// Error returns the status and the start of the body (at most 200 bytes, cut
// at a character boundary; bytes that are not UTF-8 are replaced).
func (e *HTTPError) Error() string {
	msg := "http " + strconv.Itoa(e.StatusCode)
	if text := http.StatusText(e.StatusCode); text != "" {
		msg += " " + text
	}
	body := strings.ToValidUTF8(strings.TrimSpace(string(e.Body)), "\uFFFD")
	if len(body) > maxQuotedBody {
		cut := maxQuotedBody
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut-- // do not split a character
		}
		body = body[:cut] + "..."
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
//   - a *StreamError (a stream cut or stalled) is Transient, with status 200
//     if content had arrived (see StreamError).
//   - context.Canceled is Terminal; context.DeadlineExceeded is Transient: it
//     is taken to be the timeout of one attempt. The caller's own
//     cancellation or deadline is never retried regardless: Do checks the
//     caller's context itself.
//   - errors that a retry cannot fix are Terminal: a TLS certificate that
//     does not verify (x509 and tls.CertificateVerificationError), a plain
//     HTTP answer to an HTTPS request (http.ErrSchemeMismatch, a
//     tls.RecordHeaderError), a URL that does not parse or has an
//     unsupported scheme or no host, a request net/http refuses to send
//     (an invalid method or header), too many redirects, and a host name
//     that does not exist (a *net.DNSError with IsNotFound).
//   - connection errors are Transient: any net.Error that reports a timeout,
//     a *net.OpError (dial, read or write failed), a DNS failure other than
//     "not found", connection reset, refused or aborted, broken pipe,
//     network or host unreachable, io.EOF or io.ErrUnexpectedEOF (the
//     connection ended before a whole response), and an HTTP/2 stream reset
//     (RST_STREAM, as net/http reports it, before the headers or while the
//     body is read).
//   - every other failure of a round trip is Transient: an error that
//     http.Client returns (a *url.Error, whatever it wraps: "http2: client
//     connection lost", a GOAWAY, "http: server closed idle connection",
//     ...), or that the base RoundTripper of a Transport returns. The
//     request got no usable answer, and the next one may.
//   - anything else is Terminal: an error the operation returned for a
//     reason of its own (a body that does not decode, a programming error)
//     is not retried. That includes the Anthropic Go SDK's *anthropic.Error,
//     which this package does not import: for it, use Classify from
//     github.com/retrysim/retrysim/policies/anthropicsdk.
//
// An error of your own RoundTripper, or of your http.Client's CheckRedirect,
// comes back inside a *url.Error and so counts as a failure of the round
// trip; wrap ClassifyError (see Classifier) if such an error should stop Do.
func ClassifyError(err error, now time.Time) Outcome {
	if err == nil {
		return Outcome{Class: Success}
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return ClassifyResponse(he.StatusCode, he.Header, he.Body, now)
	}
	if se := (*StreamError)(nil); errors.As(err, &se) {
		return se.Outcome()
	}
	switch {
	case errors.Is(err, context.Canceled):
		return Outcome{Class: Terminal}
	case errors.Is(err, context.DeadlineExceeded):
		return Outcome{Class: Transient}
	case isPermanentTransportError(err):
		return Outcome{Class: Terminal}
	case isConnectionError(err), isStreamReset(err), isRoundTripFailure(err):
		return Outcome{Class: Transient}
	}
	return Outcome{Class: Terminal}
}

// isConnectionError reports whether err is a failure of the connection that
// a new attempt may not meet: a timeout, a failed dial, read or write, a DNS
// failure other than "not found", or the connection ending early.
func isConnectionError(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return true // not IsNotFound: isPermanentTransportError came first
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

// http2StreamError has the fields of the HTTP/2 stream error that net/http
// returns for an RST_STREAM (its own type is unexported). That type converts
// itself, in errors.As, to any struct with the same field names and
// convertible types: golang.org/x/net/http2.StreamError is one, and this is
// another, so the policies package does not need x/net.
type http2StreamError struct {
	StreamID uint32
	Code     uint32 // the HTTP/2 error code, e.g. 2 for INTERNAL_ERROR
	Cause    error
}

func (e http2StreamError) Error() string {
	return fmt.Sprintf("http2 stream %d reset with code %d", e.StreamID, e.Code)
}

// isStreamReset reports whether err is an HTTP/2 stream error: the server
// (or a proxy) reset the request's stream, before the response headers or
// while the body was read.
func isStreamReset(err error) bool {
	var se http2StreamError
	return errors.As(err, &se)
}

// roundTripError marks an error that Transport's base RoundTripper
// returned: the request got no response. Its message is the error's own.
type roundTripError struct{ err error }

func (e *roundTripError) Error() string { return e.err.Error() }
func (e *roundTripError) Unwrap() error { return e.err }

// RoundTripFailure marks err as the failure of Transport's base
// RoundTripper, so that ClassifyError judges it as a failed round trip.
func RoundTripFailure(err error) error { return &roundTripError{err} }

// roundTripCause returns the error inside the outermost mark of a failed
// round trip in err's chain: a *url.Error from http.Client (not one from
// url.Parse, whose Op is "parse") or a roundTripError from Transport.
func roundTripCause(err error) (error, bool) {
	for e := err; e != nil; {
		switch t := e.(type) {
		case *url.Error:
			if t.Op != "parse" {
				return t.Err, true
			}
		case *roundTripError:
			return t.err, true
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			e = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				if cause, ok := roundTripCause(inner); ok {
					return cause, true
				}
			}
			return nil, false
		default:
			return nil, false
		}
	}
	return nil, false
}

// isRoundTripFailure reports whether err is the failure of an HTTP round
// trip (see roundTripCause).
func isRoundTripFailure(err error) bool {
	_, ok := roundTripCause(err)
	return ok
}

// isPermanentTransportError reports whether err is a transport failure that
// the same request will meet again: a certificate that does not verify, an
// HTTPS request answered in plain HTTP, a bad URL, a request net/http will
// not send, a redirect loop, a host name that does not exist.
func isPermanentTransportError(err error) bool {
	var (
		unknownAuthority x509.UnknownAuthorityError
		invalidCert      x509.CertificateInvalidError
		hostname         x509.HostnameError
		systemRoots      x509.SystemRootsError
		verification     *tls.CertificateVerificationError
		recordHeader     tls.RecordHeaderError
		dnsErr           *net.DNSError
		urlErr           *url.Error
	)
	switch {
	case errors.As(err, &unknownAuthority), errors.As(err, &invalidCert),
		errors.As(err, &hostname), errors.As(err, &systemRoots),
		errors.As(err, &verification), errors.As(err, &recordHeader),
		errors.Is(err, http.ErrSchemeMismatch):
		return true
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return true // the name does not exist; waiting will not create it
	case errors.As(err, &urlErr) && urlErr.Op == "parse":
		return true // url.Parse failed
	}
	// net/http reports these as plain strings, inside a *url.Error from
	// http.Client or as they are from an http.Transport.
	cause, ok := roundTripCause(err)
	if !ok || cause == nil {
		return false
	}
	msg := cause.Error()
	for _, s := range permanentRoundTripMessages {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// permanentRoundTripMessages are parts of the messages of net/http errors
// (Go 1.26) that the same request meets again.
var permanentRoundTripMessages = []string{
	"unsupported protocol scheme",
	"server gave HTTP response to HTTPS client",
	"no Host in request URL",
	"nil Request.URL",
	"nil Request.Header",
	"net/http: invalid method",
	"net/http: invalid header",
	"net/http: invalid trailer",
	"RequestURI can't be set in client requests",
	"stopped after 10 redirects",
	"failed to parse Location header",
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
// ServerWait, if the headers give one. Every response whose headers give
// rate limits (ParseRateLimits) carries them in Limits. An x-should-retry that the class and
// status do not imply is kept in Hint (see Outcome.RetriedBySDK): a 429
// with x-should-retry: false, spend limit or not, is Terminal with
// HintNoRetry.
func ClassifyResponse(status int, header http.Header, body []byte, now time.Time) Outcome {
	errType, errCode := parseErrorBody(body)
	out := Outcome{Status: status}
	if l, ok := ParseRateLimits(header, now); ok {
		out.Limits = &l
	}
	spend := isSpendLimit(errCode)
	switch {
	case spend:
		out.Class = Terminal
	case status < 400 && errType == "":
		out.Class = Success
		return out
	case status < 400:
		out.Class = ClassifyErrorType(errType)
	case status == http.StatusTooManyRequests:
		out.Class = RetryAfter
	case status == 529 || status == http.StatusServiceUnavailable || (status >= 500 && errType == "overloaded_error"):
		out.Class = Capacity
	case retriedStatus(status):
		out.Class = Transient
	default:
		out.Class = Terminal
	}
	v, ok := ParseShouldRetry(header.Get("x-should-retry"))
	if ok && !spend {
		switch {
		case !v:
			out.Class = Terminal
		case out.Class == Terminal:
			out.Class = Transient
		}
	}
	if ok && status >= 400 && v != out.RetriedBySDK() {
		out.Hint = HintNoRetry
		if v {
			out.Hint = HintRetry
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
	return code == CodeEnforcedSpendLimit || code == CodeContractSpendLimit || code == CodeInsufficientQuota
}

// parseErrorBody returns error.type and error.details.error_code of an API
// error body, or empty strings when body is not one. It never fails: a body
// that is not JSON simply carries no type.
func parseErrorBody(body []byte) (errType, code string) {
	var v struct {
		Type  string `json:"type"`
		Code  string `json:"code"` // an OpenAI Responses stream's error event
		Error *struct {
			Type    string `json:"type"`
			Code    any    `json:"code"` // OpenAI's: a string or null
			Details *struct {
				ErrorCode string `json:"error_code"`
			} `json:"details"`
		} `json:"error"`
	}
	if len(body) == 0 || json.Unmarshal(body, &v) != nil {
		return "", ""
	}
	if v.Error == nil {
		if v.Type == "error" && v.Code != "" {
			return openAIErrorType(v.Code, v.Code) // the code stands for the type too: "server_error"
		}
		return "", ""
	}
	if v.Type != "" && v.Type != "error" {
		return "", ""
	}
	if v.Type == "" {
		// OpenAI's {"error":{"type","code",...}}, without the top-level
		// type of Anthropic's.
		if c, ok := v.Error.Code.(string); ok || openAITypes[v.Error.Type] {
			return openAIErrorType(v.Error.Type, c)
		}
	}
	errType = v.Error.Type
	if v.Error.Details != nil {
		code = v.Error.Details.ErrorCode
	}
	return errType, code
}

// openAITypes are the error types only OpenAI's error objects use.
var openAITypes = map[string]bool{"server_error": true, "requests": true, "tokens": true, CodeInsufficientQuota: true}

// retriedStatus reports whether ClassifyResponse, without hints, retries a
// failure with this status.
func retriedStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500 && status <= 599
}
