package metrics

import (
	"math"
	"testing"

	"github.com/retrysim/retrysim/sim"
)

// A part's counter is a metric of its own name, the same pointer each
// time; registered names and names of no part's counter are not.
func TestCounter(t *testing.T) {
	a, ok := Counter("pool.us.east.failed")
	b, _ := Counter("pool.us.east.failed")
	if !ok || a != b || !IsCounter(a) || a.Headline || !a.Detail || !a.Optional() {
		t.Fatalf("%+v %v", a, ok)
	}
	if kind, part, what, ok := CounterPart(a.Name); !ok || kind != "pool" || part != "us.east" || what != "failed" {
		t.Errorf("CounterPart: %q %q %q %v", kind, part, what, ok)
	}
	for _, name := range []string{"completed", "layers.after_giveup", "pool.busiest_share", "queue.x.y", "layers..attempts", "pool.east.Failed"} {
		if _, ok := Counter(name); ok {
			t.Errorf("%s: a part's counter", name)
		}
	}
	if m, ok := Lookup("layers.sdk.after_giveup"); !ok || !IsCounter(m) {
		t.Errorf("Lookup does not find the counter: %v %v", m, ok)
	}
	var r sim.Result
	r.Counters.Add("pool.us.east.failed", 7)
	if v, ok := a.Value(&r); !ok || v != 7 {
		t.Errorf("value %v %v", v, ok)
	}
	if v := b.ValueOrNaN(&sim.Result{}); !math.IsNaN(v) {
		t.Errorf("a run without the counter: %v, want none", v)
	}
}
