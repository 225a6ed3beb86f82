package report

import (
	"context"
	"path/filepath"
	"regexp"
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
	if strings.Contains(got, "every axis") || !strings.HasSuffix(got, "(p99 not comparable)") || !strings.HasPrefix(got, "better where comparable: completes 668.2 more") {
		t.Errorf("Dominance = %q, want better on the axes weighed, and p99 named as not comparable", got)
	}
	ps.Metrics[3].VsBaseline.Verdict = stats.Better
	ps.Metrics[3].VsBaseline.DeltaMean, ps.Metrics[3].VsBaseline.DeltaPercent = -10, pct(-1)
	if got := Dominance(ps); !strings.HasPrefix(got, "better on every axis: ") {
		t.Errorf("every axis weighed and better: %q", got)
	}
}

// Over every built-in scenario (but the giant ones) and every file under
// docs/examples, no verdict of the trade summary overclaims: "better on
// every axis" only when none of the row's numbers that decide (the work
// done, as a share where call counts differ; attempts per completion; p50
// and p99) is worse than the reference's; "worse on none" never stands
// beside a latency left out (it may be far worse: sleep-until-reset's p99
// of 63.8 s against 13.3 s on shared-key-agents); and a latency that could
// not be weighed (not comparable) is never cited, better or worse.
func TestVerdictsNeverOverclaim(t *testing.T) {
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	all := f.Scenarios
	files, err := filepath.Glob("../docs/examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("docs/examples: %v %v", files, err)
	}
	for _, file := range files {
		ex, err := scenarios.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ex.Scenarios...)
	}
	cited := regexp.MustCompile(`\b(p50|p99) [0-9.×,]+%? (lower|higher)`)
	seeds, verdicts, every, units := 10, 0, 0, 0
	for _, s := range all {
		if s.Operations() > 20_000 || (racetest.Enabled && s.Operations() > 1000) {
			continue
		}
		m, err := runs.Collect(context.Background(), s, s.Seed, seeds, nil)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		doc := Stats(m)
		rows := TradeSummary(&doc)
		var ref *TradeRow
		for i := range rows {
			if rows[i].Verdict == "reference" {
				ref = &rows[i]
			}
		}
		if ref == nil {
			t.Fatalf("%s: no reference row", s.Name)
		}
		for i, r := range rows {
			if r.Verdict == "reference" {
				continue
			}
			verdicts++
			if r.Unit != "" {
				units++
			}
			ps := &doc.Policies[i]
			for _, lat := range []*metrics.Metric{metrics.P50, metrics.P99} {
				d := ps.Stats(lat.Name).VsBaseline
				if d == nil || d.Verdict != stats.NotComparable {
					continue
				}
				for _, c := range cited.FindAllStringSubmatch(r.Verdict, -1) {
					if c[1] == lat.Part() {
						t.Errorf("%s %s: %q cites %s, which is not comparable", s.Name, r.Policy, r.Verdict, lat.Part())
					}
				}
			}
			if strings.HasPrefix(r.Verdict, "better, worse on none") && strings.Contains(r.Verdict, "not comparable") {
				t.Errorf("%s %s: %q denies a worse latency it could not weigh", s.Name, r.Policy, r.Verdict)
			}
			if !strings.HasPrefix(r.Verdict, "better on every axis") {
				continue
			}
			every++
			worse := []struct {
				what      string
				got, want float64
				higher    bool
			}{
				{"completed share", r.Completed / r.Operations, ref.Completed / ref.Operations, true},
				{"attempts/completion", r.AttemptsPerCompletion, ref.AttemptsPerCompletion, false},
				{"p50", r.P50, ref.P50, false},
				{"p99", r.P99, ref.P99, false},
			}
			if r.Unit != "" {
				worse = append(worse, struct {
					what      string
					got, want float64
					higher    bool
				}{r.Unit + " completed", r.Done, ref.Done, true})
			}
			for _, w := range worse {
				if w.higher && w.got < w.want || !w.higher && w.got > w.want {
					t.Errorf("%s %s: %q with %s %v against the reference's %v", s.Name, r.Policy, r.Verdict, w.what, w.got, w.want)
				}
			}
		}
	}
	t.Logf("%d verdicts (%d of sessions), %d of them better on every axis", verdicts, units, every)
	if units == 0 {
		t.Error("no scenario with sessions was weighed")
	}
}
