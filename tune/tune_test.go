package tune

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	retrysim "github.com/retrysim/retrysim"
	"github.com/retrysim/retrysim/check"
	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/stats"
	"github.com/retrysim/retrysim/sweep"
)

const exampleFile = "../docs/examples/tune.yaml"

func execute(ctx context.Context, plan runs.Plan) (*runs.Results, error) {
	return runs.Execute(ctx, plan, runs.Mode{})
}

// example is docs/tune.md's problem, on few seeds.
func example(t *testing.T, seeds int, params ...string) (*Problem, []byte) {
	t.Helper()
	data, err := os.ReadFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	f, err := scenarios.Parse(exampleFile, data)
	if err != nil {
		t.Fatal(err)
	}
	p := &Problem{Policy: "budgeted", FirstSeed: 1, Seeds: seeds}
	for _, name := range []string{"healthy", "outage"} {
		s, err := f.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		p.Scenarios = append(p.Scenarios, s)
	}
	for _, spec := range params {
		q, err := sweep.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		p.Space = append(p.Space, q)
	}
	if p.Objective, err = ParseObjective("attempts"); err != nil {
		t.Fatal(err)
	}
	return p, data
}

var exampleSpace = []string{"budget_min_per_second=1:40:log6", "base=250ms:8s:log6"}

// The search finds a point that meets every target, and the policy file
// it writes passes 'check' on seeds the search never ran.
func TestSearchMeetsTargetsAndPinsThem(t *testing.T) {
	t.Parallel()
	p, data := example(t, 5, exampleSpace...)
	res, err := Search(context.Background(), p, execute)
	if err != nil {
		t.Fatal(err)
	}
	if res.Chosen == nil {
		t.Fatalf("no feasible point; closest %+v", res.Closest)
	}
	if len(res.Targets) != 4 {
		t.Fatalf("targets %v, want the file's 4", res.Targets)
	}
	for _, tr := range res.Chosen.Targets {
		if !tr.Pass {
			t.Errorf("chosen point fails %s", tr.Target)
		}
	}
	if want := (len(res.Candidates) - invalid(res)) * 2 * 5; res.Runs != want {
		t.Errorf("runs %d, want %d", res.Runs, want)
	}
	file, err := res.PolicyFile(data, "../docs/examples", "tuned")
	if err != nil {
		t.Fatal(err)
	}
	fresh := bytes.ReplaceAll(file, []byte("seed: 1\n"), []byte("seed: 501\n"))
	f, err := scenarios.Parse("tuned.yaml", fresh)
	if err != nil {
		t.Fatalf("%v\n%s", err, fresh)
	}
	for _, s := range f.Scenarios {
		if s.Seed != 501 || len(s.Policies) != 1 || len(s.Expect) == 0 {
			t.Fatalf("%s: seed %d, %d policies, %d expectations", s.Name, s.Seed, len(s.Policies), len(s.Expect))
		}
		ms, err := runs.Collect(context.Background(), s, s.Seed, check.Seeds(s, 0), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range check.Measure(s, ms) {
			if !r.Pass {
				t.Errorf("%s on fresh seeds: %s", s.Name, r.Explain())
			}
		}
	}
}

func invalid(r *Result) int {
	n := 0
	for _, c := range r.Candidates {
		if c.Invalid != "" {
			n++
		}
	}
	return n
}

// The same problem gives the same bytes, whatever GOMAXPROCS.
func TestSearchDeterministic(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	out := func() string {
		p, _ := example(t, 3, exampleSpace...)
		res, err := Search(context.Background(), p, execute)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := Write(&b, report.JSON, res); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	one := out()
	runtime.GOMAXPROCS(2)
	if two := out(); two != one {
		t.Fatalf("GOMAXPROCS 1 and 2 differ:\n%s\n%s", one, two)
	}
}

// A target no point meets leaves no chosen point, and the result says it
// binds.
func TestSearchReportsBindingTarget(t *testing.T) {
	t.Parallel()
	p, _ := example(t, 3, "budget_min_per_second=1,40")
	tg, err := ParseTarget("outage: mean(amplification) <= 0.5")
	if err != nil {
		t.Fatal(err)
	}
	p.Targets = []Target{tg}
	res, err := Search(context.Background(), p, execute)
	if err != nil {
		t.Fatal(err)
	}
	if res.Chosen != nil || res.Closest == nil {
		t.Fatalf("chosen %v, closest %v", res.Chosen, res.Closest)
	}
	if res.Met[0].Met != 0 || res.Met[0].Target.String() != "outage: mean(amplification) <= 0.5" {
		t.Errorf("met %+v", res.Met[0])
	}
	var b bytes.Buffer
	if err := Write(&b, report.Table, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "binding: outage: mean(amplification) <= 0.5 holds at none of the points") {
		t.Errorf("report does not name the binding target:\n%s", b.String())
	}
	if _, err := res.PolicyFile(nil, ".", ""); err == nil {
		t.Error("a policy file without a feasible point")
	}
}

// After the coarse grid the search refines: it runs points between the
// coarse levels, and the chosen point is the best feasible one of all.
func TestSearchRefines(t *testing.T) {
	t.Parallel()
	p, _ := example(t, 3, "budget_min_per_second=1:40:1", "base=8s")
	p.Levels = 3
	res, err := Search(context.Background(), p, execute)
	if err != nil {
		t.Fatal(err)
	}
	if res.Chosen == nil {
		t.Fatalf("no feasible point; closest %s", res.Closest.Label)
	}
	if res.Stages < 3 || res.Candidates[len(res.Candidates)-1].Stage == 0 {
		t.Fatalf("%d stages", res.Stages)
	}
	for _, c := range res.Candidates {
		if c.Feasible && c.Objective.Mean < res.Chosen.Objective.Mean {
			t.Errorf("%s is feasible with objective %v, better than the chosen %s (%v)", c.Label, c.Objective.Mean, res.Chosen.Label, res.Chosen.Objective.Mean)
		}
	}
	// The chosen value's neighbours were run (or it is an end).
	i := res.Chosen.Index[0]
	for _, n := range []int{i - 1, i + 1} {
		if n < 0 || n >= 40 {
			continue
		}
		found := false
		for _, c := range res.Candidates {
			found = found || c.Index[0] == n
		}
		if !found {
			t.Errorf("the chosen index %d's neighbour %d was not run", i, n)
		}
	}
}

// A mean is held to the end of its confidence interval, a bound on single
// runs to every seed; 'check' alone would pass both.
func TestTargetsNeedConfidence(t *testing.T) {
	t.Parallel()
	mean, _ := ParseTarget("mean(completed) >= 10")
	series := []float64{8, 13, 9, 12, 10.5}
	if r := check.Evaluate(mean.Expectation, "", 1, series); !r.Pass {
		t.Fatal("check's mean fails; the test needs one that passes")
	}
	if r := measureTarget(mean, 1, series); r.Pass || r.Bound >= 10 || r.Measured != 10.5 {
		t.Errorf("mean within noise of its bound: %+v", r)
	}
	if r := measureTarget(mean, 1, []float64{11, 12, 11, 12, 11}); !r.Pass {
		t.Errorf("mean clear of its bound: %+v", r)
	}
	// A share of the operations is held to the t interval of its
	// per-seed shares (docs/tune.md): 20 seeds that complete everything
	// hold it at 1; two seeds of 0.9 among them at 0.9756.
	share, _ := ParseTarget("mean(goodput_share) >= 0.99")
	ones := []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	if r := measureTarget(share, 1, ones); !r.Pass || r.Bound != 1 {
		t.Errorf("share of 1 on 20 seeds: %+v", r)
	}
	ones[3], ones[11] = 0.9, 0.9
	if r := measureTarget(share, 1, ones); r.Pass || r.Measured != 0.99 || r.Bound != 0.9756 {
		t.Errorf("share of 0.99 on 20 seeds, two of them 0.9: %+v", r)
	}
	one, _ := ParseTarget("completed >= 10")
	if r := measureTarget(one, 1, []float64{12, 9, 11}); r.Pass || r.Measured != 9 {
		t.Errorf("single-run bound, one seed below: %+v", r)
	}
	if r := measureTarget(one, 1, []float64{12, math.NaN()}); r.Pass || r.HasValue {
		t.Errorf("single-run bound, one seed without a value: %+v", r)
	}
}

func TestParseTargetAndObjective(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"outage: mean(amplification)<=1.2": "outage: mean(amplification) <= 1.2",
		"completed >= 3":                   "completed >= 3",
	} {
		if tg, err := ParseTarget(text); err != nil || tg.String() != want {
			t.Errorf("%q: %v, %v", text, tg, err)
		}
	}
	for text, want := range map[string]string{
		": completed >= 3":       "no scenario before ':'",
		"outage: mean(nope) > 1": "unknown metric \"nope\"",
	} {
		if _, err := ParseTarget(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
	o, err := ParseObjective("outage:mean(latency_ms.p99)")
	if err != nil || o.String() != "outage:latency_ms.p99" || o.Goal() != "minimise mean(latency_ms.p99) on outage" {
		t.Errorf("objective %v %q, %v", o, o.Goal(), err)
	}
	if o, _ := ParseObjective("completed"); o.Goal() != "maximise mean(completed) over the scenarios" {
		t.Errorf("completed: %q", o.Goal())
	}
	if _, err := ParseObjective("speed"); err == nil {
		t.Error("unknown metric accepted")
	}
}

func TestProblemErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		change func(p *Problem)
		want   string
	}{
		{func(p *Problem) { p.Space = append(p.Space, mustParam(t, "clients=10,20")) }, "clients is a parameter of the scenario, not of a policy"},
		{func(p *Problem) { p.Policy = "nope" }, "policy \"nope\": scenario healthy has no such policy (have: budgeted, budgeted-breaker)"},
		{func(p *Problem) {
			tg, _ := ParseTarget("elsewhere: completed >= 1")
			p.Targets = append(p.Targets, tg)
		}, "scenario elsewhere is not among those tuned on"},
		{func(p *Problem) { p.Space = append(p.Space, mustParam(t, "throttle=1,2")) }, "no policy of this scenario has a throttle"},
		{func(p *Problem) { p.Space = append(p.Space, mustParam(t, "base=1s,2s")) }, "parameter base is given twice"},
		{func(p *Problem) { p.Levels = 1 }, "levels 1: want 2 to 9"},
	} {
		p, _ := example(t, 2, "base=1s,2s")
		c.change(p)
		if _, err := Search(context.Background(), p, execute); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

func mustParam(t *testing.T, spec string) sweep.Param {
	t.Helper()
	q, err := sweep.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// A point the loader would refuse (a base above the cap) is not run, and
// says why.
func TestSearchSkipsInvalidPoints(t *testing.T) {
	t.Parallel()
	p, _ := example(t, 2, "budget_min_per_second=19", "base=8s,30s")
	res, err := Search(context.Background(), p, execute)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Candidates) != 2 || res.Candidates[0].Invalid != "" || !strings.Contains(res.Candidates[1].Invalid, "healthy: policies[0].cap: must be at least base (30s)") {
		t.Fatalf("points %+v", res.Candidates)
	}
	if best := cmp.Or(res.Chosen, res.Closest); res.Runs != 2*2 || best != res.Candidates[0] {
		t.Errorf("runs %d, best %v", res.Runs, best)
	}
}

// docs/tune.md's breaker search: only the threshold the outage never
// reaches is feasible.
func TestBreakerSearchDoc(t *testing.T) {
	t.Parallel()
	p, _ := example(t, 10, "breaker_failures=5:500:log5", "breaker_open_for=1s,5s,20s")
	p.Policy = "budgeted-breaker"
	res, err := Search(context.Background(), p, execute)
	if err != nil {
		t.Fatal(err)
	}
	feasible := 0
	for _, c := range res.Candidates {
		if c.Feasible {
			feasible++
			if c.Values[0] != 500 {
				t.Errorf("%s is feasible", c.Label)
			}
		}
	}
	if feasible != 3 || len(res.Candidates) != 15 || res.Chosen == nil || res.Chosen.Values[0] != 500 {
		t.Errorf("%d of %d feasible, chosen %v", feasible, len(res.Candidates), res.Chosen)
	}
}

// A preset's control whose settings the file does not write would load
// otherwise than tuned: the policy file is refused, with the reason.
func TestPolicyFileRefusesWhatLoadsOtherwise(t *testing.T) {
	t.Parallel()
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := f.Lookup("controls-outage")
	p := &Problem{Policy: "sre", Scenarios: []*scenarios.Scenario{s}, FirstSeed: 1, Seeds: 1,
		Space: []sweep.Param{mustParam(t, "budget_percent=5")}}
	p.Objective, _ = ParseObjective("attempts")
	res, err := Search(context.Background(), p, execute)
	if err != nil || res.Chosen == nil {
		t.Fatalf("%v, chosen %v", err, res)
	}
	_, err = res.PolicyFile(retrysim.BuiltinScenarios, ".", "")
	if err == nil || !strings.Contains(err.Error(), "the controls of sre load as") || !strings.Contains(err.Error(), "a preset's control settings the file does not write") {
		t.Errorf("got %v", err)
	}
}

// A scenario whose targets are all on single runs gets them as the
// search held them, on every seed: min or max over the seeds searched,
// with check_seeds those seeds (not the file's 20, for other policies).
func TestPolicyFileSingleRunTargets(t *testing.T) {
	t.Parallel()
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := f.Lookup("long-outage") // check_seeds: 20, for other policies' statistics
	p := &Problem{Policy: "capped-exponential", Scenarios: []*scenarios.Scenario{s}, FirstSeed: 1, Seeds: 2,
		Space: []sweep.Param{mustParam(t, "max_attempts=5,10")}}
	p.Objective, _ = ParseObjective("attempts")
	res, err := Search(context.Background(), p, execute)
	if err != nil || res.Chosen == nil {
		t.Fatalf("%v, chosen %v", err, res)
	}
	data, err := res.PolicyFile(retrysim.BuiltinScenarios, ".", "")
	if err != nil {
		t.Fatal(err)
	}
	g, err := scenarios.Parse("tuned.yaml", data)
	if err != nil || g.Scenarios[0].CheckSeeds != 2 || len(g.Scenarios[0].Expect) != 2 {
		t.Fatalf("%v\n%s", err, data)
	}
	for _, e := range g.Scenarios[0].Expect {
		if !e.OverSeeds() {
			t.Errorf("%s: a bare expectation, which check reads on one seed:\n%s", e, data)
		}
	}
}

// A runner-up whose objective is over completed operations only, worse
// while it completes significantly more, is not ranked against the chosen
// point (metrics.Comparable); one that completes the same is.
func TestRunnersUpFollowTheSurvivorRule(t *testing.T) {
	t.Parallel()
	p := &Problem{Objective: Objective{Metric: metrics.P99}}
	s := &searcher{p: p, res: &Result{Objective: p.Objective}}
	series := func(base float64, step float64) []float64 {
		out := make([]float64, 12)
		for i := range out {
			out[i] = base + step*float64(i%4) + float64(i)
		}
		return out
	}
	mk := func(idx int, p99, completed []float64) *Candidate {
		c := &Candidate{Index: []int{idx}, Feasible: true, objective: p99, subset: completed, Objective: report.SummarizeSeries(metrics.P99, p99)}
		return c
	}
	chosen := mk(0, series(1000, 10), series(50, 0))
	trade := mk(1, series(1100, 30), series(60, 1)) // slower, completes 10 more
	same := mk(2, series(1200, 20), series(50, 0))  // slower, completes the same
	s.res.Candidates = []*Candidate{trade, chosen, same}
	s.finish()
	if s.res.Chosen != chosen || len(s.res.RunnersUp) != 2 {
		t.Fatalf("chosen %v, runners-up %v", s.res.Chosen, s.res.RunnersUp)
	}
	if v := s.res.RunnersUp[0].Verdict; s.res.RunnersUp[0].Candidate != trade || v != stats.NotComparable {
		t.Errorf("the trade: %v", v)
	}
	if v := s.res.RunnersUp[1].Verdict; v != stats.Worse {
		t.Errorf("the same completions, slower: %v", v)
	}
}

// A bare target (completed >= X) holds on every seed searched, so the
// policy file pins it as min(completed) >= X over those seeds
// (check_seeds), not as a bare expectation that check reads on one seed:
// a seed that fails it fails check.
func TestPolicyFilePinsWhatWasChecked(t *testing.T) {
	t.Parallel()
	const seeds = 5
	p, data := example(t, seeds, "budget_min_per_second=9", "base=20s")
	p.Targets = nil
	for _, text := range []string{"outage: completed >= 1", "outage: attempts <= 100000", "healthy: mean(completed) >= 99"} {
		tg, err := ParseTarget(text)
		if err != nil {
			t.Fatal(err)
		}
		p.Targets = append(p.Targets, tg)
	}
	res, err := Search(context.Background(), p, execute)
	if err != nil {
		t.Fatal(err)
	}
	if res.Chosen == nil {
		t.Fatalf("no feasible point; closest %+v", res.Closest)
	}
	file, err := res.PolicyFile(data, "../docs/examples", "tuned")
	if err != nil {
		t.Fatal(err)
	}
	text := string(file)
	for _, want := range []string{`"min(completed) >= 1"`, `"max(attempts) <= 100000"`, `"mean(completed) >= 99"`, "check_seeds: 5"} {
		if !strings.Contains(text, want) {
			t.Errorf("the policy file does not say %s:\n%s", want, text)
		}
	}
	for _, bare := range []string{`"completed >= 1"`, `"attempts <= 100000"`} {
		if strings.Contains(text, bare) {
			t.Errorf("the policy file pins the bare %s:\n%s", bare, text)
		}
	}
	// The file passes check over the seeds searched, as the search found;
	// with the bound on attempts lowered to the fewest any seed made, it
	// fails, as the point makes more on the other seeds.
	outage := res.Chosen.Runs[slices.Index(res.Scenarios, "outage")]
	attempts, _ := metrics.Lookup("attempts")
	series := outage.Series(0, attempts)
	lo, hi := slices.Min(series), slices.Max(series)
	if lo == hi {
		t.Fatalf("attempts %v on every seed: no seed fails a lower bound", series)
	}
	lowered := strings.Replace(text, `"max(attempts) <= 100000"`, fmt.Sprintf(`"max(attempts) <= %g"`, lo), 1)
	for _, tt := range []struct {
		file string
		pass bool
	}{{text, true}, {lowered, false}} {
		f, err := scenarios.ParseIn("tuned.yaml", []byte(tt.file), "../docs/examples")
		if err != nil {
			t.Fatalf("%v\n%s", err, tt.file)
		}
		s, err := f.Lookup("outage")
		if err != nil {
			t.Fatal(err)
		}
		if n := check.Seeds(s, 0); n != seeds {
			t.Fatalf("check runs %d seeds, want the %d searched", n, seeds)
		}
		ms, err := runs.Collect(context.Background(), s, s.Seed, check.Seeds(s, 0), nil)
		if err != nil {
			t.Fatal(err)
		}
		pass := true
		for _, r := range check.Measure(s, ms) {
			pass = pass && r.Pass
		}
		if pass != tt.pass {
			t.Errorf("check passes %v, want %v (attempts on the seeds: %v):\n%s", pass, tt.pass, series, tt.file)
		}
	}
}

// With no feasible point, the closest is the one whose worst target falls
// short by the least, relative to the target: not the one that fails
// fewest targets. A point completing 1 operation of a target of 90 fails
// one target by 99%; one completing 89 with an amplification of 5.1
// against 5 fails two, by 1.1% and 2%.
func TestClosestBySmallestShortfall(t *testing.T) {
	obj, err := ParseObjective("attempts")
	if err != nil {
		t.Fatal(err)
	}
	var targets []Target
	for _, text := range []string{"completed >= 90", "amplification <= 5"} {
		tg, err := ParseTarget("outage: " + text)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, tg)
	}
	point := func(label string, completed, amplification, attempts float64) *Candidate {
		c := &Candidate{Label: label, Index: []int{len(label)}, objective: []float64{attempts, attempts, attempts}}
		for i, v := range []float64{completed, amplification} {
			c.Targets = append(c.Targets, measureTarget(targets[i], 1, []float64{v, v, v}))
		}
		c.tally()
		c.Objective = stats.Summarize(c.objective)
		return c
	}
	// The far point has the better objective and fails fewer targets.
	far := point("far", 1, 2, 100)
	near := point("near", 89, 5.1, 300)
	if far.Failing != 1 || near.Failing != 2 {
		t.Fatalf("failing %d and %d", far.Failing, near.Failing)
	}
	if math.Abs(far.Shortfall-89.0/90) > 1e-12 || math.Abs(near.Shortfall-0.02) > 1e-12 {
		t.Fatalf("shortfalls %v and %v, want 89/90 and 0.1/5", far.Shortfall, near.Shortfall)
	}
	p := &Problem{Policy: "p", Objective: obj, FirstSeed: 1, Seeds: 3}
	for _, order := range [][]*Candidate{{far, near}, {near, far}} {
		s := &searcher{p: p, res: &Result{Policy: "p", Scenarios: []string{"outage"}, Targets: targets, Objective: obj, FirstSeed: 1, Seeds: 3, Candidates: order}}
		s.finish()
		if s.res.Chosen != nil || s.res.Closest != near {
			t.Fatalf("closest %v, want near", s.res.Closest.Label)
		}
		var b bytes.Buffer
		if err := Write(&b, report.Table, s.res); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"the closest, near, falls short by 2% and fails 2", "closest: the smallest shortfall"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("the report does not say %q:\n%s", want, b.String())
			}
		}
	}
	// A failing target without a value is furthest of all.
	none := &Candidate{Label: "none", Index: []int{9}}
	none.Targets = []TargetResult{measureTarget(targets[0], 1, []float64{math.NaN()})}
	none.tally()
	if !math.IsInf(none.Shortfall, 1) || (&Result{Objective: obj}).Rank(far, none) >= 0 {
		t.Errorf("a target without a value: shortfall %v, ranked before %s", none.Shortfall, far.Label)
	}
}
