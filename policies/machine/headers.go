package machine

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// MaxServerWait is the longest server wait a retry honours. A server that
// asks for more stops the operation with a *ServerWaitError (reason
// StopDeadline) instead of being silently shortened: more than a day is
// never a wait worth sleeping through. A budget shorter than the wait stops
// it sooner, as any wait past the budget does.
const MaxServerWait = 24 * time.Hour

// MaxParsedWait is the largest wait the header parsers return; longer ones
// saturate here, which keeps the arithmetic on waits free of overflow while
// still telling a day from a year. About 11 years.
const MaxParsedWait = 100_000 * time.Hour

// ServerWaitError stops an operation whose server asked to wait longer than
// MaxServerWait.
type ServerWaitError struct {
	Wait  time.Duration // what the server asked (saturated at MaxParsedWait)
	Limit time.Duration // MaxServerWait, or the policy's FailServerWaitAbove or TotalServerWaitCap
	// Total: Limit is TotalServerWaitCap, which this wait would have
	// passed together with the operation's earlier ones.
	Total bool
}

func (e *ServerWaitError) Error() string {
	if e.Total {
		return fmt.Sprintf("server asked to wait %v, which would take the operation's server waits past their %v total", e.Wait, e.Limit)
	}
	return fmt.Sprintf("server asked to wait %v, more than the %v limit", e.Wait, e.Limit)
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
// retry-after is read. Both saturate at MaxParsedWait. now is the time the
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
// ok == false. Values above MaxParsedWait give MaxParsedWait; precision
// beyond a nanosecond rounds up, so a wait is never shortened.
func ParseRetryAfterMs(v string) (time.Duration, bool) {
	return parseDecimal(strings.TrimSpace(v), time.Millisecond)
}

// ParseRetryAfter reads a retry-after value: either non-negative decimal
// seconds, fractions allowed ("2", "0.5"), or an HTTP-date (any form
// http.ParseTime accepts, and the IMF-fixdate with "UTC" in place of
// "GMT"). A date gives the time from now until then; a date
// at or before now gives 0 with ok == true (retry without waiting for the
// server). Results saturate at MaxParsedWait. Anything else, including a
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
		// Some servers write the IMF-fixdate with "UTC" where RFC 9110 says
		// "GMT"; both mean offset 0.
		base, ok := strings.CutSuffix(v, " UTC")
		if !ok {
			return 0, false
		}
		if t, err = http.ParseTime(base + " GMT"); err != nil {
			return 0, false
		}
	}
	if !t.After(now) {
		return 0, true
	}
	return min(t.Sub(now), MaxParsedWait), true
}

// parseDecimal reads digits[.digits] as a count of unit, exactly: no floating
// point, saturating at MaxParsedWait, rounding leftover precision up.
func parseDecimal(s string, unit time.Duration) (time.Duration, bool) {
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" && frac == "" || !allDigits(intPart) || !allDigits(frac) {
		return 0, false
	}
	limit := int64(MaxParsedWait / unit)
	var whole int64
	for i := 0; i < len(intPart); i++ {
		whole = whole*10 + int64(intPart[i]-'0')
		if whole > limit {
			return MaxParsedWait, true
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
	return min(d, MaxParsedWait), true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
