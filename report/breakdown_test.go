package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/sim"
)

// breakdownResults are two runs with pool and layer counters, the second
// with a layer counter the first lacks (a model that counts more) and a
// pool member the first has not.
func breakdownResults() []sim.Result {
	return []sim.Result{
		{Policy: "p", Clients: 1, Counters: sim.Counters{
			{Name: "server.wasted", Value: 4},
			{Name: "pool.a.requests", Value: 10}, {Name: "pool.a.failed", Value: 2},
			{Name: "pool.requests", Value: 10}, // the whole pool's: no row
			{Name: "layers.outer.attempts", Value: 3}, {Name: "layers.sdk.attempts", Value: 9},
		}},
		{Policy: "q", Clients: 1, Counters: sim.Counters{
			{Name: "pool.a.requests", Value: 5}, {Name: "pool.b.requests", Value: 6}, {Name: "pool.b.failed", Value: 1},
			{Name: "layers.outer.attempts", Value: 1}, {Name: "layers.sdk.attempts", Value: 3}, {Name: "layers.sdk.after_giveup", Value: 7},
		}},
	}
}

// The table and markdown show a table per breakdown under the main one,
// every counter PREFIX.PART.WHAT a column, "-" where a row lacks it.
func TestBreakdownTables(t *testing.T) {
	c := Comparison{Scenario: "s", Seed: 1, Results: breakdownResults()}
	var b bytes.Buffer
	if err := Write(&b, Table, &c); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	pools, layers := strings.Index(out, "\npool members\n"), strings.Index(out, "\nretry layers\n")
	if pools < 0 || layers < pools {
		t.Fatalf("no pool members table, then retry layers table:\n%s", out)
	}
	for _, want := range []string{
		"| policy | member | requests | failed |",
		"| p      | a      |       10 |      2 |",
		"| q      | a      |        5 |      - |",
		"| q      | b      |        6 |      1 |",
		"| policy | layer | attempts | after_giveup |",
		"| p      | outer |        3 |            - |",
		"| q      | sdk   |        3 |            7 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "| p      | requests") || strings.Contains(out, "wasted") {
		t.Errorf("a counter that is no part's in a breakdown:\n%s", out)
	}
	b.Reset()
	if err := Write(&b, Markdown, &c); err != nil {
		t.Fatal(err)
	}
	if md := b.String(); !strings.Contains(md, "#### Pool members, seed 1\n\n| policy | member |") || !strings.Contains(md, "#### Retry layers, seed 1\n") {
		t.Errorf("markdown:\n%s", md)
	}
}

// JSON carries the breakdowns as pool_members and layers; CSV as a column
// per counter after the metrics'.
func TestBreakdownJSONAndCSV(t *testing.T) {
	c := Comparison{Scenario: "s", Seed: 1, Results: breakdownResults()}
	var b bytes.Buffer
	if err := Write(&b, JSON, &c); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		PoolMembers []BreakdownRow `json:"pool_members"`
		Layers      []BreakdownRow `json:"layers"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.PoolMembers) != 3 || doc.PoolMembers[2].Policy != "q" || doc.PoolMembers[2].Name != "b" || doc.PoolMembers[2].Counts["failed"] != 1 {
		t.Errorf("pool_members: %+v", doc.PoolMembers)
	}
	if len(doc.Layers) != 4 || doc.Layers[3].Name != "sdk" || doc.Layers[3].Counts["after_giveup"] != 7 {
		t.Errorf("layers: %+v", doc.Layers)
	}
	b.Reset()
	if err := Write(&b, CSV, &c); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if !strings.HasSuffix(lines[0], ",pool.a.requests,pool.a.failed,pool.b.requests,pool.b.failed,layers.outer.attempts,layers.sdk.attempts,layers.sdk.after_giveup") ||
		!strings.HasSuffix(lines[1], ",10,2,,,3,9,") || !strings.HasSuffix(lines[2], ",5,,6,1,1,3,7") {
		t.Errorf("csv:\n%s", b.String())
	}
}

// A run without pool or layer counters writes no breakdown in any format.
func TestNoBreakdownWithoutCounters(t *testing.T) {
	c := Comparison{Scenario: "s", Seed: 1, Results: []sim.Result{{Policy: "p", Clients: 1, Counters: sim.Counters{{Name: "pool.requests", Value: 3}}}}}
	for _, f := range Formats() {
		var b bytes.Buffer
		if err := Write(&b, f, &c); err != nil {
			t.Fatal(err)
		}
		for _, no := range []string{"member", "layer", "pool.requests"} {
			if strings.Contains(b.String(), no) {
				t.Errorf("%s has %q:\n%s", f, no, b.String())
			}
		}
	}
}
