package progress

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// Off a terminal the bar draws nothing at all.
func TestNoBarOffTerminal(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, 10_000, "runs")
	for range 10_000 {
		b.Add()
	}
	b.Done()
	if buf.Len() != 0 {
		t.Errorf("wrote %q to a buffer", buf.String())
	}
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b = New(f, 10_000, "runs")
	for range 10_000 {
		b.Add()
	}
	b.Done()
	if fi, _ := f.Stat(); fi.Size() != 0 {
		t.Errorf("wrote %d bytes to a file", fi.Size())
	}
	var nilBar *Bar
	nilBar.Add()
	nilBar.Done()
}

// terminal is a buffer that passes for a terminal.
type terminal struct{ bytes.Buffer }

func (*terminal) IsTerminal() bool { return true }

// On a terminal a bar is drawn for long work only, and removed at the end.
func TestBarOnTerminal(t *testing.T) {
	var small terminal
	b := NewEvents(&small, MinEvents-1, "short")
	b.AddN(MinEvents - 1)
	b.Done()
	if small.Len() != 0 {
		t.Errorf("drew %q for work below MinEvents", small.String())
	}
	var long terminal
	b = NewEvents(&long, 4*MinEvents, "long-outage: engine events")
	b.AddN(MinEvents)
	b.AddN(10 * MinEvents) // past the bound: held short of the total
	if b.done != b.total-1 {
		t.Errorf("done %d of %d: want one short of the total before Done", b.done, b.total)
	}
	b.Done()
	out := long.String()
	if !strings.Contains(out, "long-outage: engine events (starting)   0% |") {
		t.Errorf("the bar drew %q", out)
	}
	if !strings.HasSuffix(out, strings.Repeat(" ", 30)+"\r") {
		t.Errorf("the bar was not cleared at the end: %q", out)
	}
	var runs terminal
	r := New(&runs, MinRuns, "runs")
	for range MinRuns {
		r.Add()
	}
	r.Done()
	if !strings.Contains(runs.String(), "runs") {
		t.Errorf("the run bar drew %q", runs.String())
	}
}

// An events bar says nothing of a rate before it has one, then writes
// the rate so far and the most time left: the rest of the bound at that
// rate.
func TestEventsBarTimeLeft(t *testing.T) {
	var term terminal
	b := NewEvents(&term, 4*MinEvents, "agents")
	clock := b.start
	b.now = func() time.Time { return clock }
	if first := term.String(); !strings.Contains(first, "agents (starting)") || strings.Contains(first, "events/") {
		t.Errorf("the first frame is %q", first)
	}
	clock = clock.Add(10 * time.Second)
	b.AddN(MinEvents) // a quarter in 10 s: at most 30 s left, 1M events/s
	if got := b.bar.State().Description; got != "agents (1.00M events/s, at most 30s left)" {
		t.Errorf("the bar reads %q", got)
	}
	clock = clock.Add(eta / 2)
	b.AddN(MinEvents) // too soon to write it anew
	if got := b.bar.State().Description; got != "agents (1.00M events/s, at most 30s left)" {
		t.Errorf("the bar reads %q %v after", got, eta/2)
	}
	b.Done()
}
