package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// multiSeed builds a MultiSeed of policies whose completed counts per seed
// are given (completed[p][seed], of 10 clients); every operation completed
// takes 1 s plus as many milliseconds as there are completions.
func multiSeed(names []string, completed [][]int) *runs.MultiSeed {
	s := &scenarios.Scenario{Name: "test", Workload: sim.Burst{Clients: 10}}
	for _, n := range names {
		s.Policies = append(s.Policies, sim.Policy{Name: n})
	}
	k := len(completed[0])
	m := runs.NewMultiSeed(s, 1, k)
	for p := range names {
		for seed := range k {
			r := sim.Result{Policy: names[p], Clients: 10, Completed: completed[p][seed], Attempts: 10 + p, GaveUp: 10 - completed[p][seed]}
			for range r.Completed {
				r.Latencies = append(r.Latencies, time.Second+time.Duration(r.Completed)*time.Millisecond)
			}
			if r.Completed > 0 {
				r.LastCompletion = r.Latencies[len(r.Latencies)-1]
			}
			m.Add(seed, p, &r)
		}
	}
	return m
}

// The default reference is the first policy that completes on every seed,
// so that latencies pair; with none, the first policy, and a warning.
func TestReference(t *testing.T) {
	never := []int{0, 0, 0, 0, 0, 0, 0}
	sometimes := []int{3, 0, 3, 3, 3, 3, 3}
	always := []int{5, 5, 5, 5, 5, 5, 5}
	m := multiSeed([]string{"never", "sometimes", "always", "also"}, [][]int{never, sometimes, always, always})
	if ref, ok := Reference(m); ref != 2 || !ok {
		t.Fatalf("Reference = %d, %v; want 2 (always), true", ref, ok)
	}
	doc := Stats(m)
	if doc.Baseline != "always" || doc.Policies[2].Metrics[0].VsBaseline != nil || doc.Policies[0].Metrics[0].VsBaseline == nil {
		t.Fatalf("baseline %q; the reference must be the one without a comparison", doc.Baseline)
	}
	if d := doc.Policies[3].Stats(metrics.P50.Name).VsBaseline; d.Pairs != 7 {
		t.Errorf("latency vs a reference that always completes: %d pairs, want 7", d.Pairs)
	}
	if got := StatsVs(m, 1).Baseline; got != "sometimes" {
		t.Errorf("StatsVs(m, 1) compares with %q", got)
	}
	none := multiSeed([]string{"a", "b"}, [][]int{never, sometimes})
	if ref, ok := Reference(none); ref != 0 || ok {
		t.Fatalf("no policy completes everywhere: Reference = %d, %v; want 0, false", ref, ok)
	}
	if w := Stats(none).Warnings; len(w) == 0 || !strings.Contains(w[0], "no policy completes an operation on every seed") {
		t.Errorf("warnings %q: want one about the fallback reference", w)
	}
}

// A comparison whose pairs differ on fewer than 6 seeds can never be
// significant: its cell says how few differ, and a warning says why.
func TestUnderpoweredComparisons(t *testing.T) {
	ref := []int{5, 5, 5, 5, 5, 5, 5, 5}
	twoDiffer := []int{5, 4, 5, 5, 5, 5, 4, 5}
	allDiffer := []int{6, 6, 6, 6, 6, 6, 6, 6}
	m := multiSeed([]string{"ref", "two", "all"}, [][]int{ref, twoDiffer, allDiffer})
	doc := Stats(m)
	two := doc.Policies[1].Stats(metrics.Completed.Name).VsBaseline
	if got := two.Text(); got != "~ (p=0.500, only 2 seeds differ)" {
		t.Errorf("cell %q", got)
	}
	if got := doc.Policies[2].Stats(metrics.Completed.Name).VsBaseline.Text(); got != "+20.0% better (p=0.008)" {
		t.Errorf("cell %q", got)
	}
	// Forty times the reference is a factor, not +3900.0%.
	forty := multiSeed([]string{"ref", "forty"}, [][]int{{1, 1, 1, 1, 1, 1, 1, 1}, {40, 40, 40, 40, 40, 40, 40, 40}})
	if got := Stats(forty).Policies[1].Stats(metrics.Completed.Name).VsBaseline.Text(); got != "×40.0 better (p=0.008)" {
		t.Errorf("cell %q", got)
	}
	want := "two: completed vs ref: only 2 of 8 pairs differ: need at least 6 for significance at α = 0.05"
	found := false
	for _, w := range doc.Warnings {
		found = found || w == want
		if strings.HasPrefix(w, "all: completed") {
			t.Errorf("warning for a comparison that can be significant: %q", w)
		}
	}
	if !found {
		t.Errorf("warnings %q lack %q", doc.Warnings, want)
	}
	// With fewer seeds than the test needs, one warning says so for all.
	few := Stats(multiSeed([]string{"ref", "all"}, [][]int{ref[:3], allDiffer[:3]}))
	if len(few.Warnings) != 1 || !strings.Contains(few.Warnings[0], "seeds 1–3: no comparison can be significant") {
		t.Errorf("three seeds: warnings %q", few.Warnings)
	}
	// JSON carries the warnings; never null.
	var buf bytes.Buffer
	if err := WriteMultiSeed(&buf, JSON, &few); err != nil {
		t.Fatal(err)
	}
	var back struct{ Warnings []string }
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || len(back.Warnings) != 1 {
		t.Errorf("JSON warnings %q (%v)", back.Warnings, err)
	}
	same := Stats(multiSeed([]string{"ref", "same"}, [][]int{ref, ref}))
	buf.Reset()
	if err := WriteMultiSeed(&buf, JSON, &same); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"warnings": []`) {
		t.Errorf("no warnings must be written as an empty array:\n%s", buf.String())
	}
}

// A latency of a policy that completes significantly fewer operations than
// the reference is not comparable, however much lower it is: it describes
// the few that survived. Metrics over every operation keep their verdict.
func TestSurvivorMetricsNotComparable(t *testing.T) {
	ref := []int{9, 9, 8, 9, 9, 8, 9}
	fewer := []int{2, 1, 2, 3, 2, 1, 2} // faster (fewer completions, less queueing in the helper), but loses work
	same := []int{9, 9, 8, 9, 9, 8, 9}
	never := []int{0, 0, 0, 0, 0, 0, 0}
	more := []int{10, 10, 10, 10, 10, 10, 10} // slower, completing more
	doc := Stats(multiSeed([]string{"ref", "fewer", "same", "never", "more"}, [][]int{ref, fewer, same, never, more}))
	for _, m := range []*metrics.Metric{metrics.P50, metrics.P99, metrics.LastCompletion} {
		d := doc.Policies[1].Stats(m.Name).VsBaseline
		if d.Verdict != stats.NotComparable || d.Text() != "not comparable: completes 6.9 fewer" {
			t.Errorf("%s of a policy completing fewer: verdict %v, %q", m.Name, d.Verdict, d.Text())
		}
		if d := doc.Policies[2].Stats(m.Name).VsBaseline; d.Verdict != stats.Same {
			t.Errorf("%s of a policy completing as many: %v, want ~", m.Name, d.Verdict)
		}
		if got := doc.Policies[4].Stats(m.Name).VsBaseline.Text(); got != "not comparable: completes 1.3 more" {
			t.Errorf("%s of a slower policy completing more: %q", m.Name, got)
		}
		if got := doc.Policies[3].Stats(m.Name).VsBaseline.Text(); got != "n/a: nothing completed" {
			t.Errorf("%s of a policy completing nothing: %q", m.Name, got)
		}
	}
	if d := doc.Policies[1].Stats(metrics.Completed.Name).VsBaseline; d.Verdict != stats.Worse {
		t.Errorf("completed: %v, want worse", d.Verdict)
	}
	b, err := json.Marshal(doc.Policies[1].Stats(metrics.P99.Name).VsBaseline)
	if err != nil || !strings.Contains(string(b), `"verdict":"not comparable","note":"completes 6.9 fewer"`) {
		t.Errorf("JSON %s, %v", b, err)
	}
}

// A change relative to a reference mean near 0 is written as an amount:
// give-ups from 0.3 to 8.1 per run are "+7.86", not "+2750%".
func TestNearZeroChangeIsAnAmount(t *testing.T) {
	ref := []int{10, 10, 9, 10, 10, 9, 10}
	fewer := []int{2, 1, 2, 3, 2, 1, 2}
	doc := Stats(multiSeed([]string{"ref", "fewer"}, [][]int{ref, fewer}))
	got := doc.Policies[1].Stats(metrics.GaveUp.Name).VsBaseline.Text()
	if !strings.HasPrefix(got, "+7.8571 worse") {
		t.Errorf("gave_up vs a reference with 0.3 per run: %q", got)
	}
	if got := doc.Policies[1].Stats(metrics.Attempts.Name).VsBaseline.Text(); !strings.HasPrefix(got, "+10.0% worse") {
		t.Errorf("attempts: %q", got)
	}
}

// A share's interval stays inside [0, 1], where Student's t of the same
// values reaches past 1: clipped, it is t's below.
func TestProportionIntervalStaysInside(t *testing.T) {
	m := multiSeed([]string{"a"}, [][]int{{10, 10, 10, 10, 10, 10, 9}})
	vals, _ := m.Values(0, metrics.GoodputShare)
	tt := stats.Summarize(vals)
	if tt.CIHigh <= 1 {
		t.Fatalf("t interval %v–%v: the test needs one past 1", tt.CILow, tt.CIHigh)
	}
	s := Stats(m).Policies[0].Stats(metrics.GoodputShare.Name).Summary
	if s.CIHigh != 1 || s.CILow != round(tt.CILow, 4) {
		t.Errorf("goodput_share interval %v–%v, want t's %v clipped at 1", s.CILow, s.CIHigh, tt.CILow)
	}
	doc := Stats(m)
	rows := MultiSeedRows(&doc, metrics.GoodputShare, "-")
	if !strings.Contains(rows[0][2], "[") || strings.Contains(rows[0][2], "±") {
		t.Errorf("share cell %q", rows[0][2])
	}
}

// A share of each run's operations gets an interval from the spread of
// the per-seed shares, not one Bernoulli trial a seed: 30 perfect seeds
// read [1, 1] (not Wilson's [0.886, 1]), and shares that vary by about
// ±1.6 % read an interval about as wide. A share of runs (recovered or
// not) is one trial a seed: Wilson's interval.
func TestShareIntervalsFollowTheData(t *testing.T) {
	perfect := make([]float64, 30)
	for i := range perfect {
		perfect[i] = 1
	}
	if s := Summarize(metrics.GoodputShare, perfect); s.CILow != 1 || s.CIHigh != 1 {
		t.Errorf("30 perfect seeds: [%v, %v], want [1, 1]", s.CILow, s.CIHigh)
	}
	varying := make([]float64, 30)
	for i := range varying {
		varying[i] = 0.842 + 0.0135*float64(i%3-1) // ±1.6 % of 0.842
	}
	s := Summarize(metrics.GoodputShare, varying)
	if s.CILow < 0.835 || s.CIHigh > 0.849 || s.CILow >= s.Mean || s.CIHigh <= s.Mean {
		t.Errorf("shares 0.842 ± 1.6%%: [%v, %v], want a few thousandths either side", s.CILow, s.CIHigh)
	}
	recovered, ok := metrics.Lookup("recovery.recovered")
	if !ok {
		t.Fatal("no recovery.recovered")
	}
	if s := Summarize(recovered, perfect); s.CILow > 0.89 || s.CILow < 0.88 || s.CIHigh < 0.9999 {
		t.Errorf("30 of 30 runs recovered: [%v, %v], want Wilson's [0.886, 1]", s.CILow, s.CIHigh)
	}
}
