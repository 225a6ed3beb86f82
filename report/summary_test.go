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
		// Not "every axis": the latencies were not weighed.
		"worse, better on none: completes 5.9 fewer, sends 10% more (latencies not comparable)",
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

// A policy better where it can be weighed, with a latency that cannot
// (slower at p99 while completing more: the survivor rule), is not
// "better on every axis", and the verdict names the latency it left out
// (sleep-until-reset on shared-key-agents read "better on every axis"
// with a p99 of 63.8 s against 13.3 s).
func TestDominanceNamesWhatItCouldNotWeigh(t *testing.T) {
	pct := func(v float64) *float64 { return &v }
	diff := func(delta, percent float64, v stats.Verdict) *Difference {
		return &Difference{Pairs: 20, DeltaMean: delta, DeltaPercent: pct(percent), P: 0.001, Verdict: v}
	}
	ps := &PolicyStats{Policy: "sleep-until-reset", Metrics: []MetricStats{
		{Metric: metrics.Completed.Name, VsBaseline: diff(668.2, 50.2, stats.Better)},
		{Metric: metrics.Attempts.Name, VsBaseline: diff(-83, -4, stats.Better)},
		{Metric: metrics.P50.Name, VsBaseline: diff(-107.7, -3.2, stats.Better)},
		{Metric: metrics.P99.Name, VsBaseline: diff(50536.6, 379.7, stats.NotComparable)},
	}}
	got := Dominance(ps)
	if strings.Contains(got, "every axis") || !strings.HasSuffix(got, "(p99 not comparable)") || !strings.HasPrefix(got, "better, worse on none: completes 668.2 more") {
		t.Errorf("Dominance = %q, want better on the axes weighed, and p99 named as not comparable", got)
	}
	ps.Metrics[3].VsBaseline.Verdict = stats.Better
	ps.Metrics[3].VsBaseline.DeltaMean, ps.Metrics[3].VsBaseline.DeltaPercent = -10, pct(-1)
	if got := Dominance(ps); !strings.HasPrefix(got, "better on every axis: ") {
		t.Errorf("every axis weighed and better: %q", got)
	}
}
