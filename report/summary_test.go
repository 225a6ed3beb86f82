package report

import (
	"context"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/stats"
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
		if got := SharePercent(share); got != want {
			t.Errorf("SharePercent(%v) = %q, want %q", share, got, want)
		}
	}
}

// On every built-in scenario (but the giant ones), over enough seeds for
// the tests to be significant, no policy that completes significantly
// fewer operations than the reference is better on a metric that losing
// work can flatter: one over part of the operations, or one without a
// reason to read better when work is shed (metrics.Metric.ShedReason,
// which check's TestGiveUpEarlyIsNeverBetter holds to what runs do);
// and no trade summary calls it better.
func TestBuiltinsNeverWinByLosingWork(t *testing.T) {
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	seeds, checked := 8, 0
	for _, s := range f.Scenarios {
		if s.Operations() > 20_000 || (racetest.Enabled && s.Operations() > 1000) {
			continue
		}
		m, err := runs.Collect(context.Background(), s, s.Seed, seeds, nil)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		doc := Stats(m)
		for i := range doc.Policies {
			ps := &doc.Policies[i]
			done := ps.Stats(metrics.Completed.Name).VsBaseline
			if done == nil || done.Verdict != stats.Worse {
				continue
			}
			checked++
			for _, ms := range ps.Metrics {
				metric, _ := metrics.Lookup(ms.Metric)
				if (metric.Subset() != nil || metric.ShedReason == "") && ms.VsBaseline.Verdict == stats.Better {
					t.Errorf("%s: %s completes fewer than %s and is better on %s", s.Name, ps.Policy, doc.Baseline, ms.Metric)
				}
			}
			if v := Dominance(ps); strings.HasPrefix(v, "better") {
				t.Errorf("%s: %s completes fewer and reads %q", s.Name, ps.Policy, v)
			}
		}
	}
	if checked < 5 {
		t.Errorf("only %d policies complete significantly fewer than their reference: the test checks little", checked)
	}
	t.Logf("%d policies that complete fewer checked", checked)
}
