package report

import (
	"strings"
	"testing"
)

// The summary weighs every policy on every axis: a policy that completes
// fewer is not better for its latencies; one that completes more and sends
// more is a trade, named.
func TestTradeSummary(t *testing.T) {
	ref := []int{8, 8, 7, 8, 8, 7, 8}
	fewer := []int{2, 1, 2, 3, 2, 1, 2}
	same := []int{8, 8, 7, 8, 8, 7, 8}
	// multiSeed gives policy p 10+p attempts per run: the later policies
	// send more.
	doc := Stats(multiSeed([]string{"ref", "fewer", "same", "more"}, [][]int{ref, fewer, same, {10, 10, 10, 10, 10, 10, 10}}))
	rows := TradeSummary(&doc)
	want := []string{
		"reference",
		"worse on every axis: completes 5.9 fewer, sends 10% more (latencies not comparable)",
		"worse, better on none: sends 20% more", // same completions and latencies
		"a trade: completes 2.3 more, sends 30% more (latencies not comparable)",
	}
	for i, r := range rows {
		if r.Verdict != want[i] {
			t.Errorf("%s: %q, want %q", r.Policy, r.Verdict, want[i])
		}
	}
	if r := rows[1]; r.Completed != 1.8571 || r.Operations != 10 || r.GaveUpBy != "" {
		t.Errorf("fewer: %+v", r)
	}
	header, cells := TradeCells(&doc, "-")
	if len(header) != 7 || cells[1][1] != "1.9 of 10 (19%)" || !strings.HasPrefix(header[6], "vs ref") {
		t.Errorf("cells %q %q", header, cells[1])
	}
}

func TestSharePercent(t *testing.T) {
	for share, want := range map[float64]string{0: "0%", 1: "100%", 0.9996: ">99.9%", 0.0004: "<0.1%", 0.015: "1.5%", 0.42: "42%", 0.995: "99.5%"} {
		if got := sharePercent(share); got != want {
			t.Errorf("sharePercent(%v) = %q, want %q", share, got, want)
		}
	}
}
