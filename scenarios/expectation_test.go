package scenarios

import (
	"strings"
	"testing"
)

func TestParseExpectation(t *testing.T) {
	good := []struct {
		in   string
		want Expectation
		text string
	}{
		{"completed >= 18", Expectation{Metric: "completed", Op: ">=", Value: 18}, "completed >= 18"},
		{"  amplification<=5.5 ", Expectation{Metric: "amplification", Op: "<=", Value: 5.5}, "amplification <= 5.5"},
		{"latency_ms.p99 <= 12000", Expectation{Metric: "latency_ms.p99", Op: "<=", Value: 12000}, "latency_ms.p99 <= 12000"},
		{"gave_up == 0", Expectation{Metric: "gave_up", Op: "==", Value: 0}, "gave_up == 0"},
		{"mean(completed) >= 17", Expectation{Stat: StatMean, Metric: "completed", Op: ">=", Value: 17}, "mean(completed) >= 17"},
		{"p95( latency_ms.p50 ) < 1e4", Expectation{Stat: StatP95, Metric: "latency_ms.p50", Op: "<", Value: 10000}, "p95(latency_ms.p50) < 10000"},
		{"min(gave_up_by.deadline)>-.5", Expectation{Stat: StatMin, Metric: "gave_up_by.deadline", Op: ">", Value: -0.5}, "min(gave_up_by.deadline) > -0.5"},
	}
	for _, g := range good {
		got, err := ParseExpectation(g.in)
		if err != nil {
			t.Errorf("ParseExpectation(%q): %v", g.in, err)
			continue
		}
		if got != g.want {
			t.Errorf("ParseExpectation(%q) = %+v, want %+v", g.in, got, g.want)
		}
		if got.String() != g.text {
			t.Errorf("ParseExpectation(%q).String() = %q, want %q", g.in, got.String(), g.text)
		}
	}
	bad := []struct{ in, msg string }{
		{"", "empty expectation"},
		{"completed 18", "no comparison"},
		{"completed => 18", `unknown operator "=>"`},
		{"completed != 18", `unknown operator "!="`},
		{"completed = 18", `unknown operator "="`},
		{"completd >= 18", `unknown metric "completd"`},
		{"avg(completed) >= 18", `unknown statistic "avg"`},
		{"mean(completed >= 18", "cannot read"},
		{">= 18", "no metric"},
		{"completed >=", "no number"},
		{"completed >= eighteen", `cannot read "eighteen" as a number`},
		{"completed >= 0x12", "cannot read"},
		{"completed >= NaN", "cannot read"},
		{"completed >= 1_000", "cannot read"},
		{"completed >= 1e999", "out of range"},
		{"completed >= 18 >= 3", "cannot read"},
	}
	for _, b := range bad {
		_, err := ParseExpectation(b.in)
		if err == nil || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("ParseExpectation(%q) error = %v, want it to contain %q", b.in, err, b.msg)
		}
	}
}

// FuzzParseExpectation checks that no input panics and that whatever parses
// prints back as text that parses to the same expectation.
func FuzzParseExpectation(f *testing.F) {
	for _, s := range []string{"completed >= 18", "mean(amplification) <= 5", "latency_ms.p99 < 1e4", "gave_up == 0", "p5(x) > 1", "((", "<<=", "a>=-.5e+3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseExpectation(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("empty error for %q", s)
			}
			return
		}
		again, err := ParseExpectation(e.String())
		if err != nil || again != e {
			t.Fatalf("%q parsed to %+v, printed as %q, which parses to %+v, %v", s, e, e.String(), again, err)
		}
	})
}
