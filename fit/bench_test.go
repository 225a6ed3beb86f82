package fit

import (
	"fmt"
	"io"
	"testing"
	"time"
)

// genLog streams a synthetic attempt log of n lines without keeping it:
// an operation starts every millisecond, its first attempt is rejected
// (529) in one window of two, the retry 250 ms later succeeds, and an
// operation record ends it (three lines per operation).
type genLog struct {
	n, line int
	buf     []byte
}

func (g *genLog) Read(p []byte) (int, error) {
	for len(g.buf) < len(p) && g.line < g.n {
		op := g.line / 3
		sent := time.Unix(1_700_000_000, 0).UTC().Add(time.Duration(op) * time.Millisecond)
		switch g.line % 3 {
		case 0:
			class := `"class":"success"`
			if (op/1000)%2 == 0 {
				class = `"class":"capacity","status":529,"backoff_ms":250`
			}
			g.buf = fmt.Appendf(g.buf, `{"schema":"retrysim/attempt-log/v1","record":"attempt","op":"%d","attempt":1,"sent":"%s","answered":"%s",%s}`+"\n",
				op, sent.Format(time.RFC3339Nano), sent.Add(100*time.Millisecond).Format(time.RFC3339Nano), class)
		case 1:
			at := sent.Add(350 * time.Millisecond)
			g.buf = fmt.Appendf(g.buf, `{"schema":"retrysim/attempt-log/v1","record":"attempt","op":"%d","attempt":2,"sent":"%s","answered":"%s","class":"success"}`+"\n",
				op, at.Format(time.RFC3339Nano), at.Add(100*time.Millisecond).Format(time.RFC3339Nano))
		default:
			g.buf = fmt.Appendf(g.buf, `{"schema":"retrysim/attempt-log/v1","record":"operation","op":"%d","start":"%s","end":"%s","attempts":2,"outcome":"success"}`+"\n",
				op, sent.Format(time.RFC3339Nano), sent.Add(450*time.Millisecond).Format(time.RFC3339Nano))
		}
		g.line++
	}
	if len(g.buf) == 0 {
		return 0, io.EOF
	}
	k := copy(p, g.buf)
	g.buf = g.buf[:copy(g.buf, g.buf[k:])]
	return k, nil
}

// BenchmarkFit10M fits a 10,000,000-line log (docs/replay.md records its
// time and memory): go test ./fit -run X -bench Fit10M -benchtime 1x -benchmem
func BenchmarkFit10M(b *testing.B) {
	const lines = 10_000_000
	for b.Loop() {
		rd, err := Open(&genLog{n: lines}, "attempt-log", Options{Name: "gen"})
		if err != nil {
			b.Fatal(err)
		}
		res, err := Fit(rd, Settings{})
		if err != nil {
			b.Fatal(err)
		}
		if ops := (lines + 2) / 3; res.Attempts != lines-lines/3 || res.Operations != ops {
			b.Fatalf("%d attempts of %d operations, want %d of %d", res.Attempts, res.Operations, lines-lines/3, ops)
		}
		if err := res.WriteScenario(io.Discard, Output{Scenario: "gen", Arrivals: "gen.csv"}); err != nil {
			b.Fatal(err)
		}
		if err := res.WriteArrivals(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines), "lines/op")
}

// The generator's log fits to what it was made of: one arrival per
// millisecond; capacity = admitted in the seconds that rejected.
func TestGeneratedLogFits(t *testing.T) {
	rd, _ := Open(&genLog{n: 3 * 4000}, "attempt-log", Options{Name: "gen"})
	res, err := Fit(rd, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	var arrivals []time.Duration
	res.EachArrival(func(at time.Duration, n int) {
		for range n {
			arrivals = append(arrivals, at)
		}
	})
	if len(arrivals) != 4000 || arrivals[3999] != 3999*time.Millisecond {
		t.Fatalf("%d arrivals, last at %v", len(arrivals), arrivals[len(arrivals)-1])
	}
	wins, peak := res.Capacity()
	// Second 0 rejects its 1,000 first attempts and admits the second
	// attempts sent in it (350 ms after their first): those of ops 0-649.
	// Second 1 rejects nothing: 1,000 first attempts and 1,000 second ones
	// (ops 650-1649), all admitted, the peak.
	if !wins[0].Bound || wins[0].Admit != 650 || wins[1].Bound || wins[1].Admit != 2000 || !wins[2].Bound || peak != 2000 {
		t.Errorf("windows %+v (peak %d)", wins[:3], peak)
	}
}
