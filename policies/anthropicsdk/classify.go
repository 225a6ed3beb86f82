// Package anthropicsdk teaches package policies the errors of the official
// Anthropic Go SDK, github.com/anthropics/anthropic-sdk-go/v2.
//
// policies' default classifier, policies.ClassifyError, knows nothing of the
// SDK: it sees an *anthropic.Error as an unrecognised error and stops on it,
// so a 529 or an overloaded_error in the middle of a stream would never be
// retried. Give Do (or a Transport) this package's classifier instead:
//
//	err := policies.Do(ctx, op, anthropicsdk.WithClassifier())
//
// Around a streaming call, ReadStream reads the whole message, reports its
// content events to the stream watchdog of the attempt, and reports a
// stream that ended without message_stop as ErrIncompleteStream (Transient)
// rather than as a short answer.
//
// It lives in its own package so that policies itself does not depend on
// the SDK.
package anthropicsdk

import (
	"errors"
	"net/http"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/retrysim/retrysim/policies"
)

// Classify is a policies.Classifier that reads the SDK's *anthropic.Error
// (anywhere in err's chain) and leaves every other error to
// policies.ClassifyError (connection errors, context errors, a
// *policies.HTTPError from a Transport, ...).
//
// An *anthropic.Error with an HTTP error status (400 and above) is classified
// by policies.ClassifyResponse from its StatusCode, its response headers
// (x-should-retry, retry-after-ms, retry-after) and its body (error.type and
// error.details.error_code): 429 is RetryAfter with the server's wait, 529,
// 503 and overloaded_error are Capacity, other 5xx, 408 and 409 Transient, a
// spend-limit error_code and other 4xx Terminal.
//
// An *anthropic.Error with a status below 400 is an error event the server
// sent inside a streamed response after its 200: the SDK raises it while you
// iterate, with the 200's StatusCode. It is classified by its error type, as
// policies.ClassifyEvent does (overloaded_error is Capacity, api_error and
// timeout_error Transient, rate_limit_error RetryAfter with no wait, a
// spend-limit error_code and anything else Terminal); the headers of the 200
// are not read, since they were sent before the error and say nothing of
// it. Outcome.Status is the StatusCode.
func Classify(err error, now time.Time) policies.Outcome {
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) {
		return policies.ClassifyError(err, now)
	}
	body := []byte(apiErr.RawJSON())
	if apiErr.StatusCode < 400 {
		out := policies.ClassifyEvent("error", body)
		out.Status = apiErr.StatusCode
		return out
	}
	var header http.Header
	if apiErr.Response != nil {
		header = apiErr.Response.Header
	}
	return policies.ClassifyResponse(apiErr.StatusCode, header, body, now)
}

// WithClassifier is policies.WithClassifier(Classify): the option that makes
// Do or a Transport understand the SDK's errors.
func WithClassifier() policies.Option { return policies.WithClassifier(Classify) }
