package fit

import (
	"strings"
	"testing"
)

// fuzzRead reads text in format: never a panic; every record it returns is
// whole (an attempt from 1, answered not before sent); an error names the
// log.
func fuzzRead(t *testing.T, text, format string, lenient bool) {
	rd, err := Open(strings.NewReader(text), format, Options{Name: "f.log", Lenient: lenient, MaxLine: 1 << 16})
	if err != nil {
		if !strings.HasPrefix(err.Error(), "f.log") {
			t.Fatalf("error without the log's name: %v", err)
		}
		return
	}
	var r Record
	for rd.Next(&r) {
		switch r.Kind {
		case AttemptRecord:
			if r.Attempt < 1 || r.Answered.Before(r.Sent) || r.Op == "" || r.ServerWait < 0 || r.Backoff < 0 {
				t.Fatalf("bad attempt %+v", r)
			}
		case OperationRecord:
			if r.Op == "" {
				t.Fatalf("operation without id %+v", r)
			}
		default:
			t.Fatalf("record of kind %d", r.Kind)
		}
	}
	if err := rd.Err(); err != nil && !strings.HasPrefix(err.Error(), "f.log") {
		t.Fatalf("error without the log's name: %v", err)
	}
}

func FuzzAttemptLog(f *testing.F) {
	f.Add(`{"schema":"retrysim/attempt-log/v1","record":"attempt","op":"1","attempt":1,"sent":"2026-03-01T12:00:00Z","answered":"2026-03-01T12:00:00.1Z","class":"capacity","status":529,"server_wait_ms":1.5,"backoff_ms":500}`)
	f.Add(`{"schema":"retrysim/attempt-log/v1","record":"operation","op":"1","start":"2026-03-01T12:00:00Z","end":"2026-03-01T12:00:04Z","attempts":4,"outcome":"gave_up","reason":"attempts"}`)
	f.Fuzz(func(t *testing.T, s string) {
		fuzzRead(t, s, "attempt-log", false)
		fuzzRead(t, s, "attempt-log", true)
	})
}

func FuzzOTLP(f *testing.F) {
	f.Add(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"t","spanId":"s","parentSpanId":"p","name":"retry.attempt","startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[{"key":"retry.attempt","value":{"intValue":"2"}},{"key":"http.response.status_code","value":{"intValue":"429"}},{"key":"retry.server_wait","value":{"doubleValue":1.5}}]}]}]}]}`)
	f.Add(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"t","spanId":"p","name":"retry.operation","startTimeUnixNano":"1","endTimeUnixNano":"9","attributes":[{"key":"retry.outcome","value":{"stringValue":"gave_up"}}]}]}]}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		fuzzRead(t, s, "otlp-json", false)
		fuzzRead(t, s, "otlp-json", true)
	})
}

func FuzzCSV(f *testing.F) {
	f.Add("sent,answered,op,attempt,status,class,server_wait_ms,backoff_ms\n2026-03-01T12:00:00Z,2026-03-01T12:00:00.1Z,a,1,529,,,250\n1.5,1.6,a,2,200,success,,\n")
	f.Add("sent,latency_ms\n\"1\",3\n# c\n2,x\n")
	f.Fuzz(func(t *testing.T, s string) {
		fuzzRead(t, s, "csv", false)
		fuzzRead(t, s, "csv", true)
		fuzzRead(t, s, "", false)
	})
}
