package fit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// readAll reads every record of a log given as text.
func readAll(t *testing.T, text, format string, o Options) ([]Record, Reader, error) {
	t.Helper()
	if o.Name == "" {
		o.Name = "log"
	}
	rd, err := Open(strings.NewReader(text), format, o)
	if err != nil {
		return nil, nil, err
	}
	var out []Record
	var r Record
	for rd.Next(&r) {
		out = append(out, r)
	}
	return out, rd, rd.Err()
}

// The attempt logs policies/attemptlog writes read back record for record:
// every line is one record, attempts and operations in their own kinds.
func TestReadsPoliciesAttemptLogs(t *testing.T) {
	files, _ := filepath.Glob("../policies/attemptlog/testdata/*.golden")
	files = append(files, "../sim/simlog/testdata/small.golden")
	if len(files) < 3 {
		t.Fatalf("found %d attempt logs", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		recs, _, err := readAll(t, text, "", Options{Name: f})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if want := strings.Count(text, `"record":"attempt"`) + strings.Count(text, `"record":"operation"`) - strings.Count(text, `"copy":`); len(recs) != want {
			t.Errorf("%s: %d records, want %d", f, len(recs), want)
		}
		for _, r := range recs {
			if r.Kind == AttemptRecord && (r.Attempt < 1 || r.Answered.Before(r.Sent)) {
				t.Errorf("%s: bad attempt %+v", f, r)
			}
		}
	}
}

func TestAttemptLogFields(t *testing.T) {
	line := `{"schema":"retrysim/attempt-log/v1","record":"attempt","op":"7","attempt":3,"sent":"2026-03-01T12:00:01Z","answered":"2026-03-01T12:00:01.25Z","class":"retry-after","status":429,"server_wait_ms":3000,"backoff_ms":3000.5,"future_field":1}`
	recs, _, err := readAll(t, line, "attempt-log", Options{})
	if err != nil || len(recs) != 1 {
		t.Fatal(recs, err)
	}
	r := recs[0]
	if r.Op != "7" || r.Attempt != 3 || r.Class != policies.RetryAfter || !r.Classified || r.Status != 429 ||
		r.ServerWait != 3*time.Second || r.Backoff != 3000500*time.Microsecond || r.Answered.Sub(r.Sent) != 250*time.Millisecond {
		t.Errorf("read %+v", r)
	}
}

// A bad line names its file, line and field; --lenient skips and counts it.
func TestBadLines(t *testing.T) {
	good := `{"schema":"retrysim/attempt-log/v1","record":"attempt","op":"1","attempt":1,"sent":"2026-03-01T12:00:00Z","answered":"2026-03-01T12:00:00Z","class":"success"}`
	cases := []struct{ format, text, want string }{
		{"attempt-log", good + "\n" + strings.Replace(good, `"sent":"2026-03-01T12:00:00Z"`, `"sent":"yesterday"`, 1), "day.log:2: sent: "},
		{"attempt-log", good + "\n\n" + strings.Replace(good, `"attempt":1`, `"attempt":"one"`, 1), "day.log:3: attempt: "},
		{"attempt-log", strings.Replace(good, "v1", "v2", 1), "day.log:1: schema: "},
		{"attempt-log", good + "\n{not json", "day.log:2: not JSON"},
		{"attempt-log", strings.Replace(good, `"class":"success"`, `"class":"fine"`, 1), "day.log:1: class: unknown class"},
		{"csv", "sent,status\n2026-03-01T12:00:00Z,200\n12.5,abc\n", "day.log:3: status: "},
		{"csv", "ts,code\n1,200\n", "day.log:1: no column sent"},
		{"otlp-json", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"a","name":"GET","startTimeUnixNano":"1","endTimeUnixNano":"0","attributes":[{"key":"http.response.status_code","value":{"intValue":"200"}}]}]}]}]}`,
			"day.log:1: resourceSpans[0].scopeSpans[0].spans[0].endTimeUnixNano: is before"},
	}
	for _, c := range cases {
		_, _, err := readAll(t, c.text, c.format, Options{Name: "day.log"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: error %v, want %q", c.format, c.text, err, c.want)
		}
	}
	recs, rd, err := readAll(t, good+"\n{bad\n"+good+"\n", "", Options{Name: "day.log", Lenient: true})
	if err != nil || len(recs) != 2 || rd.Skipped() != 1 {
		t.Errorf("lenient: %d records, %d skipped, %v; want 2, 1, nil", len(recs), rd.Skipped(), err)
	}
	var le *LineError
	_, _, err = readAll(t, strings.Repeat("x", 100), "attempt-log", Options{Name: "day.log", MaxLine: 10})
	if !errors.As(err, &le) || le.Line != 1 {
		t.Errorf("long line: %v", err)
	}
}

func TestCSVMap(t *testing.T) {
	m, err := ParseMap("sent=ts, status=code,op=request_id,latency_ms=took")
	if err != nil {
		t.Fatal(err)
	}
	text := "ts,request_id,code,took,attempt\n# a comment\n1700000000.5,r1,529,100,1\n1700000001,r1,200,50.5,2\n"
	recs, _, err := readAll(t, text, "csv", Options{Map: m})
	if err != nil || len(recs) != 2 {
		t.Fatal(recs, err)
	}
	if r := recs[0]; r.Op != "r1" || r.Class != policies.Capacity || r.Sent != time.Unix(1700000000, 5e8).UTC() || r.Answered.Sub(r.Sent) != 100*time.Millisecond {
		t.Errorf("row 1: %+v", r)
	}
	if r := recs[1]; r.Attempt != 2 || r.Class != policies.Success || r.Answered.Sub(r.Sent) != 50500*time.Microsecond {
		t.Errorf("row 2: %+v", r)
	}
	for _, bad := range []string{"sent", "sent=ts,sent=x", "when=ts"} {
		if _, err := ParseMap(bad); err == nil {
			t.Errorf("ParseMap(%q) accepted", bad)
		}
	}
}

// OTLP JSON with the attributes of the HTTP semantic conventions only: the
// attempt number from the resend count, the class from the status, the
// operation from the parent span.
func TestOTLPSemanticConventions(t *testing.T) {
	line := `{"resourceSpans":[{"resource":{},"scopeSpans":[{"scope":{"name":"net/http"},"spans":[` +
		`{"traceId":"t1","spanId":"s1","parentSpanId":"p1","name":"POST","startTimeUnixNano":"1000000000","endTimeUnixNano":"1100000000","attributes":[{"key":"http.response.status_code","value":{"intValue":"529"}}]},` +
		`{"traceId":"t1","spanId":"s2","parentSpanId":"p1","name":"POST","startTimeUnixNano":1600000000,"endTimeUnixNano":1700000000,"attributes":[{"key":"http.response.status_code","value":{"intValue":200}},{"key":"http.request.resend_count","value":{"intValue":"1"}}]},` +
		`{"traceId":"t1","spanId":"s3","name":"db query","startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]}]}`
	recs, _, err := readAll(t, line, "", Options{})
	if err != nil || len(recs) != 2 {
		t.Fatal(recs, err)
	}
	if recs[0].Op != "p1" || recs[0].Attempt != 1 || recs[0].Class != policies.Capacity || recs[1].Attempt != 2 || recs[1].Class != policies.Success {
		t.Errorf("read %+v", recs)
	}
}

// A log that records no waits (CSV without backoff_ms) has them inferred:
// the gap from an attempt's answer to the operation's next attempt.
func TestInferredWaits(t *testing.T) {
	var b strings.Builder
	b.WriteString("sent,answered,op,attempt,status\n")
	for op := range 10 {
		at := float64(op) * 0.01
		b.WriteString(fmt.Sprintf("%.3f,%.3f,o%d,1,529\n%.3f,%.3f,o%d,2,200\n", at, at+0.1, op, at+0.6, at+0.7, op))
	}
	rd, err := Open(strings.NewReader(b.String()), "csv", Options{Name: "w.csv"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Fit(rd, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	p := res.FitPolicy()
	if p.Type != "immediate" || p.Delay != 500*time.Millisecond || p.Samples != 10 || p.Inside != 10 {
		t.Errorf("fitted %+v; want immediate, 500ms, 10 of 10 waits", p)
	}
}
