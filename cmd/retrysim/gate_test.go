package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/internal/scenariotest"
)

// A multi-seed baseline gates 'check': the same policy passes, a slower one
// fails (exit 1) naming the metric, p and the tolerance; markdown and JUnit
// carry the same verdicts.
func TestCheckWithMultiSeedBaseline(t *testing.T) {
	t.Parallel()
	same := writeFile(t, "same.yaml", scenariotest.GateYAML("500ms"))
	slower := writeFile(t, "slower.yaml", scenariotest.GateYAML("1s"))
	base, _, code, _ := runCLI(t, "compare", "--file", same, "--seeds", "30", "--format", "json")
	if code != 0 {
		t.Fatalf("compare: exit %d", code)
	}
	baseline := writeFile(t, "baseline.json", base)
	out, errOut, code, _ := runCLI(t, "check", "--file", same, "--baseline", baseline)
	if code != 0 || !strings.Contains(out, "19 of 19 metrics show no significant change") || !strings.Contains(out, ": PASS") {
		t.Fatalf("the same policy: exit %d\n%s%s", code, out, errOut)
	}
	junit := t.TempDir() + "/j.xml"
	out, errOut, code, _ = runCLI(t, "check", "--file", slower, "--baseline", baseline, "--format", "markdown", "--junit", junit)
	if code != 1 || !strings.Contains(out, "### Baseline comparison over seeds") || !strings.Contains(out, "| FAIL   | gate     | full-jitter | latency_ms.p95") {
		t.Fatalf("base doubled: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "seeds 1-30) gate/full-jitter: latency_ms.p95: ") || !strings.Contains(out, "worse beyond the tolerance (5% of the baseline") {
		t.Errorf("the failure does not explain itself:\n%s", out)
	}
	// The JUnit file says how the metrics were tested: α over the family.
	if x, err := os.ReadFile(junit); err != nil || !strings.Contains(string(x), `<property name="alpha" value="0.05"></property>`) ||
		!strings.Contains(string(x), `<property name="paired_tests" value="19"></property>`) {
		t.Errorf("JUnit without the family's α and tests (%v):\n%s", err, x)
	}
	// A looser tolerance for the latencies lets it pass.
	_, _, code, _ = runCLI(t, "check", "--file", slower, "--baseline", baseline,
		"--tolerance", "latency_ms.p50=100%", "--tolerance", "latency_ms.p95=100%", "--tolerance", "latency_ms.p99=100%", "--tolerance", "last_completion_ms=100%",
		"--tolerance", "latency_ms.mean=100%", "--tolerance", "give_up_ms.p50=100%", "--tolerance", "give_up_ms.p99=100%")
	if code != 0 {
		t.Errorf("with 100%% tolerance on the latencies: exit %d, want 0", code)
	}
	for _, bad := range [][]string{{"--tolerance", "speed=5%"}, {"--tolerance", "5%", "--tolerance", "6%"}, {"--tolerance", "completed=five"}} {
		if _, errOut, code, _ := runCLI(t, append([]string{"check", "--file", same, "--baseline", baseline}, bad...)...); code != 2 || !strings.Contains(errOut, "--tolerance") {
			t.Errorf("%v: exit %d, %q; want exit 2 naming --tolerance", bad, code, errOut)
		}
	}
}

// 'retrysim diff': paired statistics over seeds, every format, exit 0
// unless --fail-on worse; reports on other seeds are refused (exit 2).
func TestDiff(t *testing.T) {
	t.Parallel()
	same := writeFile(t, "same.yaml", scenariotest.GateYAML("500ms"))
	slower := writeFile(t, "slower.yaml", scenariotest.GateYAML("1s"))
	record := func(file string, extra ...string) string {
		out, errOut, code, _ := runCLI(t, append([]string{"compare", "--file", file, "--format", "json"}, extra...)...)
		if code != 0 {
			t.Fatalf("compare %v: exit %d %s", extra, code, errOut)
		}
		return writeFile(t, strings.ReplaceAll(file[strings.LastIndex(file, "/")+1:]+strings.Join(extra, ""), "-", "")+".json", out)
	}
	old, now := record(same, "--seeds", "30"), record(slower, "--seeds", "30")
	out, _, code, _ := runCLI(t, "diff", old, now)
	// The five latencies and give_up_ms.p99 (adjusted p 0.044 when this
	// was written; give_up_ms.p50's 0.034 alone is not significant among
	// the family's 8 counted tests).
	if code != 0 || !strings.Contains(out, "Paired by seed, two-sided signed-rank test") || !strings.Contains(out, "worse (beyond tolerance)") ||
		!strings.Contains(out, "6 of 19 metrics worse beyond tolerance") || !strings.Contains(out, "13 other metrics show no significant change (--all shows them)") {
		t.Fatalf("diff: exit %d\n%s", code, out)
	}
	if _, _, code, _ := runCLI(t, "diff", old, now, "--fail-on", "worse"); code != 1 {
		t.Errorf("--fail-on worse with a worse latency: exit %d, want 1", code)
	}
	if _, _, code, _ := runCLI(t, "diff", old, old, "--fail-on", "worse"); code != 0 {
		t.Errorf("a report against itself with --fail-on worse: exit %d, want 0", code)
	}
	js, _, code, _ := runCLI(t, "diff", old, now, "--format", "json")
	var doc struct {
		Schema string `json:"schema"`
		Seeds  int    `json:"seeds"`
		Rows   []struct {
			Metric  string   `json:"metric"`
			P       *float64 `json:"p_value"`
			Verdict string   `json:"verdict"`
			Fail    bool     `json:"fail"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || code != 0 || doc.Schema != "retrysim/diff/v1" || doc.Seeds != 30 || len(doc.Rows) != 19 {
		t.Fatalf("json: exit %d, %v, %+v", code, err, doc)
	}
	for _, r := range doc.Rows {
		if r.Fail && (r.P == nil || *r.P >= 0.05 || r.Verdict != "worse") {
			t.Errorf("json row %+v fails without a significant worsening", r)
		}
	}
	csvOut, _, code, _ := runCLI(t, "diff", old, now, "--format", "csv")
	if lines := strings.Split(strings.TrimSpace(csvOut), "\n"); code != 0 || len(lines) != 20 || !strings.HasPrefix(lines[0], "policy,metric,better,") {
		t.Errorf("csv: exit %d, %d lines:\n%s", code, len(lines), csvOut)
	}
	// One seed each: no test, every difference shown.
	one, oneSlow := record(same), record(slower)
	out, _, code, _ = runCLI(t, "diff", one, oneSlow)
	if code != 0 || !strings.Contains(out, "One seed: no test") || !strings.Contains(out, "other metrics are unchanged (--all shows them)") {
		t.Errorf("single-seed diff: exit %d\n%s", code, out)
	}
	// Other seeds cannot be paired.
	other := record(same, "--seeds", "30", "--seed", "2")
	if _, errOut, code, _ := runCLI(t, "diff", old, other); code != 2 || !strings.Contains(errOut, "a diff pairs the same seeds") {
		t.Errorf("other seeds: exit %d, %q", code, errOut)
	}
	for _, args := range [][]string{{"diff", old}, {"diff", "-", "-"}, {"diff", old, now, "--fail-on", "better"}, {"diff", old, "/nonexistent.json"}} {
		if _, _, code, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
