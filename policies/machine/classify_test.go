package machine

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func errBody(typ string) []byte {
	return []byte(`{"type":"error","error":{"type":"` + typ + `","message":"x"}}`)
}

func spendBody(code string) []byte {
	return []byte(`{"type":"error","error":{"type":"rate_limit_error","message":"x","details":{"error_code":"` + code + `"}}}`)
}

func TestClassifyResponse(t *testing.T) {
	tests := []struct {
		name   string
		status int
		header http.Header
		body   []byte
		want   Outcome
	}{
		{"200", 200, nil, nil, Outcome{Class: Success, Status: 200}},
		{"204 ignores retry headers", 204, hdr("retry-after", "3", "x-should-retry", "true"), nil, Outcome{Class: Success, Status: 204}},
		{"200 with ordinary JSON", 200, nil, []byte(`{"type":"message","id":"m"}`), Outcome{Class: Success, Status: 200}},
		{"200 with overloaded error event", 200, nil, errBody("overloaded_error"), Outcome{Class: Capacity, Status: 200}},
		{"200 with api_error event", 200, nil, errBody("api_error"), Outcome{Class: Transient, Status: 200}},
		{"200 with timeout_error event", 200, nil, errBody("timeout_error"), Outcome{Class: Transient, Status: 200}},
		{"200 with invalid_request_error event", 200, nil, errBody("invalid_request_error"), Outcome{Class: Terminal, Status: 200}},

		{"429 retry-after seconds", 429, hdr("retry-after", "2"), errBody("rate_limit_error"), Outcome{Class: RetryAfter, Status: 429, ServerWait: 2 * time.Second}},
		{"429 retry-after fraction", 429, hdr("retry-after", "1.5"), nil, Outcome{Class: RetryAfter, Status: 429, ServerWait: 1500 * time.Millisecond}},
		{"429 retry-after-ms wins", 429, hdr("retry-after-ms", "250.5", "retry-after", "9"), nil, Outcome{Class: RetryAfter, Status: 429, ServerWait: 250500 * time.Microsecond}},
		{"429 malformed ms falls back", 429, hdr("retry-after-ms", "soon", "retry-after", "3"), nil, Outcome{Class: RetryAfter, Status: 429, ServerWait: 3 * time.Second}},
		{"429 retry-after date", 429, hdr("retry-after", now.Add(90*time.Second).Format(http.TimeFormat)), nil, Outcome{Class: RetryAfter, Status: 429, ServerWait: 90 * time.Second}},
		{"429 retry-after past date", 429, hdr("retry-after", now.Add(-time.Hour).Format(http.TimeFormat)), nil, Outcome{Class: RetryAfter, Status: 429}},
		{"429 negative retry-after ignored", 429, hdr("retry-after", "-5"), nil, Outcome{Class: RetryAfter, Status: 429}},
		{"429 garbage retry-after ignored", 429, hdr("retry-after", "later"), nil, Outcome{Class: RetryAfter, Status: 429}},
		{"429 huge retry-after capped", 429, hdr("retry-after", "99999999999999999999"), nil, Outcome{Class: RetryAfter, Status: 429, ServerWait: MaxParsedWait}},
		{"429 without hint", 429, nil, errBody("rate_limit_error"), Outcome{Class: RetryAfter, Status: 429}},
		{"429 enforced spend limit", 429, nil, spendBody(CodeEnforcedSpendLimit), Outcome{Class: Terminal, Status: 429}},
		{"429 contract spend limit even with should-retry", 429, hdr("x-should-retry", "true", "retry-after", "5"), spendBody(CodeContractSpendLimit), Outcome{Class: Terminal, Status: 429}},
		{"429 other error code", 429, hdr("retry-after", "1"), spendBody("something_else"), Outcome{Class: RetryAfter, Status: 429, ServerWait: time.Second}},
		{"streamed 200 error with spend limit", 200, nil, spendBody(CodeEnforcedSpendLimit), Outcome{Class: Terminal, Status: 200}},
		{"503 with spend limit", 503, hdr("retry-after", "1"), spendBody(CodeContractSpendLimit), Outcome{Class: Terminal, Status: 503}},
		{"403 with spend limit stays terminal", 403, nil, spendBody(CodeEnforcedSpendLimit), Outcome{Class: Terminal, Status: 403}},
		{"429 should-retry false", 429, hdr("x-should-retry", "false", "retry-after", "1"), nil, Outcome{Class: Terminal, Status: 429, Hint: HintNoRetry}},

		{"529", 529, nil, errBody("overloaded_error"), Outcome{Class: Capacity, Status: 529}},
		{"503", 503, nil, nil, Outcome{Class: Capacity, Status: 503}},
		{"503 with retry-after keeps wait", 503, hdr("retry-after", "4"), nil, Outcome{Class: Capacity, Status: 503, ServerWait: 4 * time.Second}},
		{"500 overloaded body", 500, nil, errBody("overloaded_error"), Outcome{Class: Capacity, Status: 500}},
		{"529 should-retry false", 529, hdr("x-should-retry", "false"), nil, Outcome{Class: Terminal, Status: 529}},

		{"408", 408, nil, nil, Outcome{Class: Transient, Status: 408}},
		{"409", 409, nil, nil, Outcome{Class: Transient, Status: 409}},
		{"500", 500, nil, errBody("api_error"), Outcome{Class: Transient, Status: 500}},
		{"502", 502, nil, []byte("<html>bad gateway</html>"), Outcome{Class: Transient, Status: 502}},
		{"504", 504, nil, nil, Outcome{Class: Transient, Status: 504}},
		{"599", 599, nil, nil, Outcome{Class: Transient, Status: 599}},

		{"400", 400, nil, errBody("invalid_request_error"), Outcome{Class: Terminal, Status: 400}},
		{"401", 401, nil, nil, Outcome{Class: Terminal, Status: 401}},
		{"402", 402, nil, nil, Outcome{Class: Terminal, Status: 402}},
		{"403", 403, nil, nil, Outcome{Class: Terminal, Status: 403}},
		{"404", 404, nil, nil, Outcome{Class: Terminal, Status: 404}},
		{"413", 413, nil, nil, Outcome{Class: Terminal, Status: 413}},
		{"422", 422, nil, nil, Outcome{Class: Terminal, Status: 422}},
		{"418 unrecognised", 418, nil, nil, Outcome{Class: Terminal, Status: 418}},
		{"600 unrecognised", 600, nil, nil, Outcome{Class: Terminal, Status: 600}},
		{"400 should-retry true", 400, hdr("x-should-retry", "true", "retry-after-ms", "100"), nil, Outcome{Class: Transient, Status: 400, ServerWait: 100 * time.Millisecond}},
		{"400 should-retry TRUE spaced", 400, hdr("x-should-retry", " TRUE "), nil, Outcome{Class: Transient, Status: 400}},
		{"400 should-retry garbage ignored", 400, hdr("x-should-retry", "yes"), nil, Outcome{Class: Terminal, Status: 400}},
		{"500 should-retry garbage ignored", 500, hdr("x-should-retry", "1"), nil, Outcome{Class: Transient, Status: 500}},
		{"400 terminal ignores retry-after", 400, hdr("retry-after", "5"), nil, Outcome{Class: Terminal, Status: 400}},
		{"malformed JSON body", 529, nil, []byte(`{"type":"error","error":`), Outcome{Class: Capacity, Status: 529}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ClassifyResponse(tt.status, tt.header, tt.body, now)
			if got != tt.want {
				t.Errorf("ClassifyResponse(%d, %v, %s) = %+v, want %+v", tt.status, tt.header, tt.body, got, tt.want)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	tests := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"0", 0, true},
		{"2", 2 * time.Second, true},
		{" 2 ", 2 * time.Second, true},
		{"0.5", 500 * time.Millisecond, true},
		{".25", 250 * time.Millisecond, true},
		{"3.", 3 * time.Second, true},
		{"0.0000000001", 1, true}, // below a nanosecond rounds up, never down
		{"1.0000000000", time.Second, true},
		{"86400", MaxServerWait, true},
		{"86401", MaxServerWait + time.Second, true},
		{"360000000", MaxParsedWait, true},
		{"360000001", MaxParsedWait, true},
		{"1e3", 0, false},
		{"+3", 0, false},
		{"-1", 0, false},
		{"-0.5", 0, false},
		{"Inf", 0, false},
		{"NaN", 0, false},
		{"0x10", 0, false},
		{"1_000", 0, false},
		{".", 0, false},
		{"", 0, false},
		{"1.2.3", 0, false},
		{now.Add(30 * time.Second).Format(http.TimeFormat), 30 * time.Second, true},
		{now.Add(30 * time.Second).Format(time.RFC850), 30 * time.Second, true},
		{now.Add(30 * time.Second).Format(time.ANSIC), 30 * time.Second, true},
		{now.Format(http.TimeFormat), 0, true},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
		{now.Add(400 * 24 * time.Hour).Format(http.TimeFormat), 400 * 24 * time.Hour, true},
		{now.Add(200_000 * time.Hour).Format(http.TimeFormat), MaxParsedWait, true},
		{"Mon, 99 Foo 2026 99:99:99 GMT", 0, false},
		{strings.Replace(now.Add(30*time.Second).Format(http.TimeFormat), "GMT", "UTC", 1), 30 * time.Second, true},
		{strings.Replace(now.Add(-time.Minute).Format(http.TimeFormat), "GMT", "UTC", 1), 0, true},
		{strings.Replace(now.Add(30*time.Second).Format(time.RFC850), "UTC", "GMT", 1), 30 * time.Second, true},
		{strings.Replace(now.Add(30*time.Second).Format(http.TimeFormat), "GMT", "PST", 1), 0, false},
		{strings.Replace(now.Add(30*time.Second).Format(http.TimeFormat), "GMT", "UTCX", 1), 0, false},
		{"UTC", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestParseRetryAfterMs(t *testing.T) {
	tests := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"0", 0, true},
		{"250", 250 * time.Millisecond, true},
		{"1500.5", 1500500 * time.Microsecond, true},
		{"0.000001", time.Nanosecond, true},
		{"0.0000001", time.Nanosecond, true}, // rounds up
		{"86400000", MaxServerWait, true},
		{"360000000001", MaxParsedWait, true},
		{"1e400", 0, false},
		{"-250", 0, false},
		{"NaN", 0, false},
		{"Infinity", 0, false},
		{"12ms", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseRetryAfterMs(tt.in)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("ParseRetryAfterMs(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestServerWaitNilHeader(t *testing.T) {
	if d, ok := ServerWait(nil, now); d != 0 || ok {
		t.Errorf("ServerWait(nil) = %v, %v", d, ok)
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassifyError(t *testing.T) {
	opErr := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	tests := []struct {
		name string
		err  error
		want Class
	}{
		{"nil", nil, Success},
		{"http error 529 wrapped", fmt.Errorf("call: %w", &HTTPError{StatusCode: 529}), Capacity},
		{"http error 400", &HTTPError{StatusCode: 400}, Terminal},
		{"canceled", context.Canceled, Terminal},
		{"deadline (attempt timeout)", context.DeadlineExceeded, Transient},
		{"net timeout", &url.Error{Op: "Post", URL: "u", Err: timeoutErr{}}, Transient},
		{"os deadline", os.ErrDeadlineExceeded, Transient},
		{"connection refused", &url.Error{Op: "Post", URL: "u", Err: opErr}, Transient},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), Transient},
		{"broken pipe", syscall.EPIPE, Transient},
		{"unexpected EOF", io.ErrUnexpectedEOF, Transient},
		{"EOF before a response", &url.Error{Op: "Post", URL: "u", Err: io.EOF}, Transient},
		{"dns not found", &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}, Terminal},
		{"dns temporary", &net.DNSError{Err: "server misbehaving", Name: "x", IsTemporary: true}, Transient},
		{"unrecognised", errors.New("boom"), Terminal},
		{"url error around anything", &url.Error{Op: "Get", URL: "u", Err: errors.New("boom")}, Transient},
		{"url parse error", &url.Error{Op: "parse", URL: "::", Err: errors.New("missing protocol scheme")}, Terminal},
		{"real url parse error", func() error { _, err := url.Parse("http://[::1"); return err }(), Terminal},
		{"http2 connection lost", &url.Error{Op: "Post", URL: "u", Err: errors.New("http2: client connection lost")}, Transient},
		{"http2 GOAWAY", &url.Error{Op: "Post", URL: "u", Err: errors.New("http2: server sent GOAWAY and closed the connection; LastStreamID=1, ErrCode=NO_ERROR, debug=\"\"")}, Transient},
		{"server closed idle connection", &url.Error{Op: "Post", URL: "u", Err: errors.New("http: server closed idle connection")}, Transient},
		{"http2 stream reset mid-body", fmt.Errorf("reading: %w", http2StreamError{StreamID: 1, Code: 2}), Transient},
		{"dns not found in url error", &url.Error{Op: "Get", URL: "u", Err: &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}}}, Terminal},
		{"scheme mismatch", &url.Error{Op: "Get", URL: "u", Err: http.ErrSchemeMismatch}, Terminal},
		{"no host", &url.Error{Op: "Get", URL: "http:///x", Err: errors.New("http: no Host in request URL")}, Terminal},
		{"invalid header", &url.Error{Op: "Get", URL: "u", Err: errors.New(`net/http: invalid header field name "a b"`)}, Terminal},
		{"redirect loop", &url.Error{Op: "Get", URL: "u", Err: errors.New("stopped after 10 redirects")}, Terminal},
		{"canceled in url error", &url.Error{Op: "Get", URL: "u", Err: context.Canceled}, Terminal},
		{"decode error of the operation", fmt.Errorf("decoding answer: %w", errors.New("invalid character")), Terminal},
		{"url error around op error", &url.Error{Op: "Get", URL: "u", Err: &net.OpError{Op: "read", Net: "tcp", Err: errors.New("x")}}, Transient},
		{"url error around reset", &url.Error{Op: "Get", URL: "u", Err: fmt.Errorf("read: %w", syscall.ECONNRESET)}, Transient},
		{"url error around EPIPE", &url.Error{Op: "Get", URL: "u", Err: syscall.EPIPE}, Transient},
		{"url error around unexpected EOF", &url.Error{Op: "Get", URL: "u", Err: io.ErrUnexpectedEOF}, Transient},
		{"connection aborted", syscall.ECONNABORTED, Transient},
		{"host unreachable", &url.Error{Op: "Get", URL: "u", Err: syscall.EHOSTUNREACH}, Transient},
		{"unknown authority", &url.Error{Op: "Get", URL: "u", Err: x509.UnknownAuthorityError{}}, Terminal},
		{"hostname mismatch", &url.Error{Op: "Get", URL: "u", Err: x509.HostnameError{Certificate: &x509.Certificate{}, Host: "h"}}, Terminal},
		{"expired certificate", &url.Error{Op: "Get", URL: "u", Err: x509.CertificateInvalidError{Reason: x509.Expired}}, Terminal},
		{"tls verification", &url.Error{Op: "Get", URL: "u", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}}, Terminal},
		{"certificate inside op error", &net.OpError{Op: "remote error", Err: x509.UnknownAuthorityError{}}, Terminal},
		{"unsupported scheme", &url.Error{Op: "Get", URL: "ftp://x", Err: errors.New(`unsupported protocol scheme "ftp"`)}, Terminal},
		{"http answer to https", &url.Error{Op: "Get", URL: "https://x", Err: errors.New("http: server gave HTTP response to HTTPS client")}, Terminal},
	}
	for _, tt := range tests {
		if got := ClassifyError(tt.err, now); got.Class != tt.want {
			t.Errorf("%s: ClassifyError(%v) = %v, want %v", tt.name, tt.err, got.Class, tt.want)
		}
	}
}

func TestClassifyEvent(t *testing.T) {
	tests := []struct {
		event string
		data  []byte
		want  Class
	}{
		{"content_block_delta", []byte(`{"type":"content_block_delta"}`), Success},
		{"error", errBody("overloaded_error"), Capacity},
		{"error", errBody("api_error"), Transient},
		{"error", errBody("timeout_error"), Transient},
		{"error", errBody("rate_limit_error"), RetryAfter},
		{"error", errBody("authentication_error"), Terminal},
		{"error", []byte("not json"), Terminal},
		{"error", spendBody(CodeEnforcedSpendLimit), Terminal},
		{"error", spendBody(CodeContractSpendLimit), Terminal},
		{"error", spendBody("something_else"), RetryAfter},
	}
	for _, tt := range tests {
		if got := ClassifyEvent(tt.event, tt.data); got.Class != tt.want {
			t.Errorf("ClassifyEvent(%q, %s) = %v, want %v", tt.event, tt.data, got.Class, tt.want)
		}
	}
}

func TestHTTPErrorMessage(t *testing.T) {
	tests := []struct {
		err  *HTTPError
		want string
	}{
		{&HTTPError{StatusCode: 529, Body: errBody("overloaded_error")}, `http 529: {"type":"error","error":{"type":"overloaded_error","message":"x"}}`},
		{&HTTPError{StatusCode: 404}, "http 404 Not Found"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

// The message quotes at most 200 bytes of the body, cut at a character
// boundary, and stays valid UTF-8 whatever the body holds.
func TestHTTPErrorMessageValidUTF8(t *testing.T) {
	for _, body := range []string{
		strings.Repeat("é", 150),       // 2-byte runes; the 200th byte ends one
		"x" + strings.Repeat("é", 150), // the 200th byte is in the middle of one
		strings.Repeat("日本", 60),       // 3-byte runes
		"ok \xff\xfe bytes that are not UTF-8",
	} {
		msg := (&HTTPError{StatusCode: 529, Body: []byte(body)}).Error()
		if !utf8.ValidString(msg) {
			t.Errorf("message for body %q is not valid UTF-8: %q", body, msg)
		}
		if quoted, _ := strings.CutPrefix(msg, "http 529: "); len(strings.TrimSuffix(quoted, "...")) > 200 {
			t.Errorf("message quotes %d bytes of the body, want at most 200", len(quoted))
		}
	}
}

func FuzzServerWait(f *testing.F) {
	for _, s := range []string{"0", "2", "1.5", "-1", "1e9", "NaN", "99999999999999999999", ".", "Sun, 06 Nov 1994 08:49:37 GMT", "0.0000000001"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, ms, sec string) {
		h := http.Header{}
		h.Set("retry-after-ms", ms)
		h.Set("retry-after", sec)
		d, ok := ServerWait(h, now)
		if d < 0 || d > MaxParsedWait || (!ok && d != 0) {
			t.Fatalf("ServerWait(ms=%q, s=%q) = %v, %v", ms, sec, d, ok)
		}
		d1, ok1 := ParseRetryAfterMs(ms)
		if d1 < 0 || d1 > MaxParsedWait || (!ok1 && d1 != 0) {
			t.Fatalf("ParseRetryAfterMs(%q) = %v, %v", ms, d1, ok1)
		}
		d2, ok2 := ParseRetryAfter(sec, now)
		if d2 < 0 || d2 > MaxParsedWait || (!ok2 && d2 != 0) {
			t.Fatalf("ParseRetryAfter(%q) = %v, %v", sec, d2, ok2)
		}
		if _, ok := ParseShouldRetry(sec); ok && sec == "" {
			t.Fatalf("empty x-should-retry parsed")
		}
		_ = ClassifyResponse(429, h, []byte(ms), now)
	})
}

// TestClassifyErrorRealTransport classifies the errors net/http really
// returns for mistakes a retry cannot fix. Loopback only, nothing waits.
func TestClassifyErrorRealTransport(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer plain.Close()
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshake is expected
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	for _, tt := range []struct{ name, url string }{
		{"unsupported scheme", "ftp://" + plain.Listener.Addr().String()},
		{"http answer to https", "https://" + plain.Listener.Addr().String()},
		{"self-signed certificate", tlsSrv.URL},
	} {
		resp, err := client.Get(tt.url)
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s: GET %s succeeded", tt.name, tt.url)
			continue
		}
		if got := ClassifyError(err, now); got.Class != Terminal {
			t.Errorf("%s: ClassifyError(%v) = %v, want terminal", tt.name, err, got.Class)
		}
	}
}

// checkWait fails unless (d, ok) is a valid parser result: within
// [0, MaxServerWait], and 0 when ok is false.
func checkWait(t *testing.T, what, in string, d time.Duration, ok bool) {
	t.Helper()
	if d < 0 || d > MaxParsedWait || (!ok && d != 0) {
		t.Fatalf("%s(%q) = %v, %v", what, in, d, ok)
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{
		"0", "2", " 2 ", "0.5", ".25", "3.", "-1", "+3", "1e3", "0x10", "NaN", "Inf",
		"86401", "99999999999999999999", "0.0000000001",
		now.Add(30 * time.Second).Format(http.TimeFormat),
		strings.Replace(now.Add(30*time.Second).Format(http.TimeFormat), "GMT", "UTC", 1),
		now.Format(time.RFC850), now.Format(time.ANSIC), "Mon, 99 Foo 2026 99:99:99 GMT", " UTC", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := ParseRetryAfter(v, now)
		checkWait(t, "ParseRetryAfter", v, d, ok)
		// Decimal seconds read as the same digits in milliseconds, times
		// 1000, whenever neither saturates. Both round leftover precision
		// up to the nanosecond, milliseconds after the sixth digit of
		// fraction and seconds after the ninth: so the seconds are never
		// more than the milliseconds times 1000, less by under 1µs (999.1ns
		// as ".0009991" milliseconds rounds up to 1µs, as documented), and
		// equal when the milliseconds did not round.
		if ms, okMs := ParseRetryAfterMs(v); okMs != (ok && allDecimal(strings.TrimSpace(v))) {
			t.Fatalf("ParseRetryAfterMs(%q) ok = %v, ParseRetryAfter ok = %v", v, okMs, ok)
		} else if okMs && d < MaxParsedWait && ms < MaxParsedWait/1000 {
			_, frac, _ := strings.Cut(strings.TrimSpace(v), ".")
			msRounded := len(strings.TrimRight(frac, "0")) > 6
			if gap := ms*1000 - d; gap < 0 || gap >= time.Microsecond || !msRounded && gap != 0 {
				t.Fatalf("%q: %v as seconds, %v as milliseconds", v, d, ms)
			}
		}
		// Spaces around the value do not matter.
		if d2, ok2 := ParseRetryAfter(" "+v+" ", now); d2 != d || ok2 != ok {
			t.Fatalf("ParseRetryAfter(%q) = %v, %v, but with spaces around %v, %v", v, d, ok, d2, ok2)
		}
	})
}

// allDecimal reports whether s is digits[.digits] with at least one digit.
func allDecimal(s string) bool {
	i, f, _ := strings.Cut(s, ".")
	return (i != "" || f != "") && allDigits(i) && allDigits(f)
}

func FuzzParseRetryAfterMs(f *testing.F) {
	for _, s := range []string{"0", "250", "1500.5", "0.000001", "0.0000001", "86400000", "1e400", "-250", "NaN", "Infinity", "12ms", "", " 7 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := ParseRetryAfterMs(v)
		checkWait(t, "ParseRetryAfterMs", v, d, ok)
		if ok != allDecimal(strings.TrimSpace(v)) {
			t.Fatalf("ParseRetryAfterMs(%q) ok = %v", v, ok)
		}
		// One more digit of fraction never shortens the wait.
		if ok && strings.Contains(v, ".") {
			if d2, _ := ParseRetryAfterMs(strings.TrimSpace(v) + "9"); d2 < d {
				t.Fatalf("%q gives %v, %q9 gives %v", v, d, v, d2)
			}
		}
	})
}

func FuzzParseShouldRetry(f *testing.F) {
	for _, s := range []string{"true", "false", " TRUE ", "False", "", "yes", "1", "truee", "\ttrue\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		retry, ok := ParseShouldRetry(v)
		want := strings.ToLower(strings.TrimSpace(v))
		if ok != (want == "true" || want == "false") || ok && retry != (want == "true") || !ok && retry {
			t.Fatalf("ParseShouldRetry(%q) = %v, %v", v, retry, ok)
		}
	})
}

// ClassifyResponse never panics on any status, header value or body, and
// its outcome keeps the rules that do not depend on the details.
func FuzzClassifyResponse(f *testing.F) {
	f.Add(429, "2", "", "", string(errBody("rate_limit_error")))
	f.Add(529, "", "1500", "false", string(errBody("overloaded_error")))
	f.Add(200, "", "", "true", string(errBody("overloaded_error")))
	f.Add(429, "5", "", "true", string(spendBody(CodeEnforcedSpendLimit)))
	f.Add(400, "1", "", "true", "not json")
	f.Add(-1, "x", "y", "z", `{"type":"error","error":null}`)
	f.Fuzz(func(t *testing.T, status int, retryAfter, retryAfterMs, shouldRetry, body string) {
		h := http.Header{}
		h.Set("retry-after", retryAfter)
		h.Set("retry-after-ms", retryAfterMs)
		h.Set("x-should-retry", shouldRetry)
		out := ClassifyResponse(status, h, []byte(body), now)
		if out.Class > Terminal || out.Status != status || out.ServerWait < 0 || out.ServerWait > MaxParsedWait {
			t.Fatalf("ClassifyResponse(%d, %v, %q) = %+v", status, h, body, out)
		}
		if _, code := parseErrorBody([]byte(body)); isSpendLimit(code) && out.Class != Terminal {
			t.Fatalf("spend limit classified %v", out.Class)
		}
		if out.Class == Terminal && out.ServerWait != 0 {
			t.Fatalf("terminal outcome with a server wait: %+v", out)
		}
		if retry, ok := ParseShouldRetry(shouldRetry); ok && !retry && out.Class != Terminal && status >= 400 {
			t.Fatalf("x-should-retry: false, yet %v", out.Class)
		}
	})
}

func FuzzHTTPErrorMessage(f *testing.F) {
	for _, s := range []string{"", "plain", strings.Repeat("é", 150), "x" + strings.Repeat("日本", 70), "\xff\xfe", strings.Repeat(" ", 300) + "é"} {
		f.Add(529, []byte(s))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		msg := (&HTTPError{StatusCode: status, Body: body}).Error()
		if !utf8.ValidString(msg) {
			t.Fatalf("message for %q is not valid UTF-8: %q", body, msg)
		}
		if len(msg) > 300 {
			t.Fatalf("message of %d bytes", len(msg))
		}
	})
}
