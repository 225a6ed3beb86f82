package check

import (
	"strings"
	"testing"

	"github.com/retrysim/retrysim/report"
)

// A baseline runs with the --param values it records unless others are
// given; the same values in another order are the same.
func TestBaselineParams(t *testing.T) {
	rec := &report.Origin{Params: []string{"clients=40", "outage=5s"}}
	if p, note, problem := BaselineParams("b.json", rec, nil, false); strings.Join(p, " ") != "clients=40 outage=5s" || problem != "" ||
		note != "b.json was recorded with --param clients=40 --param outage=5s: the check runs it so" {
		t.Errorf("no --param: %v, %q, %q", p, note, problem)
	}
	if p, note, problem := BaselineParams("b.json", rec, []string{"outage=5s", "clients=40"}, true); len(p) != 2 || note != "" || problem != "" {
		t.Errorf("the same values in another order: %v, %q, %q", p, note, problem)
	}
	_, _, problem := BaselineParams("b.json", rec, []string{"clients=20", "base=1s"}, true)
	if want := "--param differs: clients=20 here, clients=40 when recorded, outage=5s when recorded, not set here, base=1s here, not set when recorded"; problem != want {
		t.Errorf("other values: %q, want %q", problem, want)
	}
	if p, note, problem := BaselineParams("b.json", nil, []string{"clients=20"}, true); len(p) != 1 || note != "" || problem != "" {
		t.Errorf("no origin: the values given are used unchecked: %v, %q, %q", p, note, problem)
	}
	if w := CompareOrigins("a.json", rec, "b.json", nil); len(w) != 1 || !strings.Contains(w[0], "b.json does not record what produced it") {
		t.Errorf("one report without origin: %q", w)
	}
	if w := CompareOrigins("a.json", nil, "b.json", nil); w != nil {
		t.Errorf("two reports without origin: %q", w)
	}
}
