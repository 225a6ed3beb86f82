package machine

import (
	"fmt"
	"strconv"
	"strings"
)

// RetryOn is a retry rule by status and class, as a proxy's (Envoy's
// retry_on with retriable_status_codes): a failure is retried only if its
// HTTP status is in Statuses or its class in Classes; every other failure
// ends the operation (StopTerminal) and is the caller's answer as it came.
//
// A status matches a failed response whatever the classifier made of it,
// so a listed 429 is retried even when its body says a spend limit was
// reached, as a proxy that reads only the status retries it. A class
// matches failures without a status too (a timeout, a reset connection)
// and failures inside a streamed 200 (Outcome.MidStream). x-should-retry
// is not read. The zero RetryOn sets no rule.
//
// Istio's default route retries connection failures, refused streams and
// 503, not 529: RetryOn{Statuses: Statuses(503)} is its HTTP part.
type RetryOn struct {
	Statuses StatusSet
	Classes  ClassSet
}

// IsZero reports whether r sets no rule.
func (r RetryOn) IsZero() bool { return r == RetryOn{} }

// Retries reports whether the rule retries the failure out.
func (r RetryOn) Retries(out Outcome) bool {
	if r.Classes.Has(out.Class) {
		return true
	}
	return !out.MidStream() && r.Statuses.Has(out.Status)
}

// String lists the statuses, then the classes: "503,529,capacity".
func (r RetryOn) String() string {
	parts := []string{}
	if s := r.Statuses.String(); s != "" {
		parts = append(parts, s)
	}
	if c := r.Classes.String(); c != "" {
		parts = append(parts, c)
	}
	return strings.Join(parts, ",")
}

// StatusSet is a set of HTTP error statuses, MinRetryStatus to
// MaxRetryStatus. A value, so that a Policy stays comparable.
type StatusSet [4]uint64

// The statuses a StatusSet holds: the errors, client's and server's.
const (
	MinRetryStatus = 400
	MaxRetryStatus = 599
)

// Statuses returns the set of the given statuses; it refuses one outside
// MinRetryStatus..MaxRetryStatus.
func Statuses(codes ...int) (StatusSet, error) {
	var s StatusSet
	for _, c := range codes {
		if c < MinRetryStatus || c > MaxRetryStatus {
			return StatusSet{}, fmt.Errorf("status %d: a retry rule lists error statuses, %d to %d", c, MinRetryStatus, MaxRetryStatus)
		}
		i := c - MinRetryStatus
		s[i/64] |= 1 << (i % 64)
	}
	return s, nil
}

// Has reports whether status is in the set.
func (s StatusSet) Has(status int) bool {
	if status < MinRetryStatus || status > MaxRetryStatus {
		return false
	}
	i := status - MinRetryStatus
	return s[i/64]&(1<<(i%64)) != 0
}

// String lists the statuses in order, e.g. "503,529".
func (s StatusSet) String() string {
	var codes []string
	for c := MinRetryStatus; c <= MaxRetryStatus; c++ {
		if s.Has(c) {
			codes = append(codes, strconv.Itoa(c))
		}
	}
	return strings.Join(codes, ",")
}
