package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/internal/golden"
)

// writeFile writes content to name in a fresh temporary directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// burst is the reference scenario (domain brief §6) with two policies;
// {{base}} and {{expect}} are filled in by tests.
const burst = `scenarios:
  - name: burst
    seed: 1
    check_seeds: 20
    server:
      phases:
        - duration: 2s
        - admit: 6
          window: 1s
    clients:
      count: 20
      max_attempts: 8
      deadline: 20s
    policies:
      - name: capped-exponential
        base: {{base}}
        cap: 8s
        expect: [{{expect}}]
      - name: gated
        throttle:
          rate: 6
        expect: ["min(completed) >= 20"]
`

func burstFile(t *testing.T, base, expect string) string {
	return writeFile(t, "burst.yaml", strings.NewReplacer("{{base}}", base, "{{expect}}", expect).Replace(burst))
}

func TestCheckPasses(t *testing.T) {
	t.Parallel()
	path := burstFile(t, "500ms", `"completed >= 18", "amplification <= 5.5", "mean(completed) >= 17"`)
	out, errOut, code, _ := runCLI(t, "check", "--file", path)
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"| ok     | burst    | capped-exponential | completed >= 18", "|       18 | seed 1 ", path + ":18:18", "seeds 1..20", "4 of 4 expectations hold: PASS"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestCheckBuiltin(t *testing.T) {
	t.Parallel()
	out, errOut, code, _ := runCLI(t, "check", "--scenario", "overload-burst", "--scenario", "rate-limited-burst", "--scenario", "long-outage")
	if code != 0 {
		t.Fatalf("the built-in expectations fail (exit %d):\n%s%s", code, out, errOut)
	}
}

func TestCheckFails(t *testing.T) {
	t.Parallel()
	path := burstFile(t, "500ms", `"completed >= 19", "latency_ms.p99 <= 16100"`)
	junit := filepath.Join(t.TempDir(), "check.xml")
	out, errOut, code, _ := runCLI(t, "check", "--file", path, "--format", "markdown", "--junit", junit)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"| FAIL   | burst", "completed is 18 over seed 1; expected completed >= 19", "### Failures", "2 of 3 expectations hold: FAIL"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "check failed: 1 expectation(s) failed") {
		t.Errorf("stderr: %q", errOut)
	}
	data, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(data, &suites); err != nil || suites.Tests != 3 || suites.Failures != 1 {
		t.Errorf("JUnit: %+v, %v\n%s", suites, err, data)
	}
}

func TestCheckBadInput(t *testing.T) {
	t.Parallel()
	good := burstFile(t, "500ms", `"completed >= 18"`)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown metric", []string{"check", "--file", burstFile(t, "500ms", `"completd >= 18"`)},
			`burst.yaml:18:18: scenarios[0].policies[0].expect[0]: unknown metric "completd"`},
		{"bad operator", []string{"check", "--file", burstFile(t, "500ms", `"completed =< 18"`)}, `unknown operator "=<"`},
		{"bad number", []string{"check", "--file", burstFile(t, "500ms", `"completed >= lots"`)}, `cannot read "lots" as a number`},
		{"seeds", []string{"check", "--file", good, "--seeds", "0"}, "--seeds must be between 1"},
		{"format", []string{"check", "--file", good, "--format", "csv"}, `unknown format "csv"`},
		{"unknown scenario", []string{"check", "--file", good, "--scenario", "nope"}, `no scenario "nope"`},
		{"missing baseline", []string{"check", "--file", good, "--baseline", filepath.Join(t.TempDir(), "none.json")}, "no such file"},
		{"multi-seed baseline", []string{"check", "--file", good, "--baseline", writeFile(t, "b.json", strings.Replace(readGolden(t, "overload-burst"), `"seed": 1,`, `"seed": 1, "seeds": 100,`, 1))}, `b.json: not a single-seed JSON report: json: unknown field "seeds"`},
		{"baseline missing a field", []string{"check", "--file", good, "--baseline", writeFile(t, "b.json", `{"scenario": "burst", "results": []}`)}, `b.json: missing field "seed"`},
		{"baseline of another scenario", []string{"check", "--file", good, "--baseline", writeFile(t, "b.json", strings.Replace(readGolden(t, "overload-burst"), "overload-burst", "other", 1))}, `no scenario "other"`},
		{"tolerance", []string{"check", "--file", good, "--baseline", "x.json", "--tolerance", "5"}, "want a percentage"},
		{"tolerance without baseline", []string{"check", "--file", good, "--tolerance", "5%"}, "--tolerance applies to --baseline"},
	}
	for _, c := range cases {
		_, errOut, code, _ := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", c.name, code, errOut, c.want)
		}
	}
	// A multi-seed report recorded before values per seed is refused.
	old := `{"schema": "retrysim/multi-seed/v1", "scenario": "s", "first_seed": 1, "seeds": 1, "policies": [{"policy": "p", "metrics": [{"metric": "completed", "better": "higher", "n": 1, "summary": null, "vs_baseline": null}]}]}`
	if _, errOut, code, _ := runCLI(t, "check", "--file", good, "--baseline", writeFile(t, "multi.json", old)); code != 2 || !strings.Contains(errOut, "multi.json: policies[0] (p): metrics[0]: completed has no values per seed") {
		t.Errorf("v1 multi-seed baseline: exit %d, %q", code, errOut)
	}
	// A file without expectations: nothing to check is bad input.
	plain := writeFile(t, "plain.yaml", `scenarios:
  - name: plain
    server: {phases: [{admit: 1, window: 1s}]}
    clients: {count: 2, max_attempts: 2}
    policies: [{name: immediate}]
`)
	if _, errOut, code, _ := runCLI(t, "check", "--file", plain); code != 2 || !strings.Contains(errOut, "nothing to check") {
		t.Errorf("no expectations: exit %d, %q", code, errOut)
	}
}

func readGolden(t *testing.T, scenario string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "compare-"+scenario+".json.golden"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestBaselineCatchesWorsePolicy records a baseline, then makes the
// capped-exponential policy worse (a 4s base instead of 500ms: waits grow
// past the 20s deadline, so fewer operations complete) and checks that the baseline comparison fails and says
// what changed.
func TestBaselineCatchesWorsePolicy(t *testing.T) {
	t.Parallel()
	good := burstFile(t, "500ms", `"completed >= 1"`)
	baseline, errOut, code, _ := runCLI(t, "compare", "--file", good, "--format", "json")
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	basePath := writeFile(t, "baseline.json", baseline)

	// Unchanged policies pass, with or without tolerance.
	for _, tol := range []string{"0", "5%"} {
		if out, errOut, code, _ := runCLI(t, "check", "--file", good, "--baseline", basePath, "--tolerance", tol); code != 0 {
			t.Errorf("unchanged, tolerance %s: exit %d\n%s%s", tol, code, out, errOut)
		} else if !strings.Contains(out, "38 of 38 baseline metrics unchanged.") {
			t.Errorf("unchanged: output\n%s", out)
		}
	}

	worse := burstFile(t, "4s", `"completed >= 1"`)
	out, errOut, code, _ := runCLI(t, "check", "--file", worse, "--baseline", basePath, "--tolerance", "5%")
	if code != 1 {
		t.Fatalf("worse policy: exit %d, want 1\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"burst/capped-exponential: completed fell from 18 to 12 (-6, -33.3%), worse beyond the 5% tolerance",
		"worse beyond the 5% tolerance (higher is better)",
		"| FAIL   | burst    | capped-exponential | completed",
		"metric(s) worse than the baseline beyond tolerance",
	} {
		if !strings.Contains(squeeze(out+errOut), squeeze(want)) {
			t.Errorf("output lacks %q:\n%s%s", want, out, errOut)
		}
	}
	// Its quicker latencies come from completing fewer: not comparable.
	if !strings.Contains(squeeze(out), "| not comparable | burst | capped-exponential | latency_ms.p99 |") {
		t.Errorf("the quicker p99 of a policy completing fewer is not 'not comparable':\n%s", out)
	}
	// The gated policy did not change and must not be blamed.
	if strings.Contains(out, "burst/gated") {
		t.Errorf("the unchanged gated policy is reported:\n%s", out)
	}

	// Immediate retries instead of backoff: caught as well.
	immediate := strings.Replace(strings.NewReplacer("{{expect}}", `"completed >= 0"`).Replace(burst),
		"      - name: capped-exponential\n        base: {{base}}\n        cap: 8s\n",
		"      - name: capped-exponential\n        type: immediate\n", 1)
	if out, errOut, code, _ := runCLI(t, "check", "--file", writeFile(t, "imm.yaml", immediate), "--baseline", basePath, "--tolerance", "5%"); code != 1 {
		t.Errorf("immediate retries: exit %d, want 1\n%s%s", code, out, errOut)
	}
}

// TestCheckDeterministic: the same check gives the same bytes on any
// GOMAXPROCS.
func TestCheckDeterministic(t *testing.T) {
	path := burstFile(t, "500ms", `"mean(completed) >= 0", "p95(latency_ms.p99) >= 0", "max(amplification) >= 0"`)
	var outs []string
	for _, procs := range []int{1, 2, 4} {
		prev := runtime.GOMAXPROCS(procs)
		out, _, code, _ := runCLI(t, "check", "--file", path, "--seeds", "30")
		runtime.GOMAXPROCS(prev)
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		outs = append(outs, out)
	}
	if outs[0] != outs[1] || outs[0] != outs[2] {
		t.Errorf("output depends on GOMAXPROCS:\n%s\n%s\n%s", outs[0], outs[1], outs[2])
	}
	if !strings.Contains(outs[0], "seeds 1..30") {
		t.Errorf("--seeds 30 not applied:\n%s", outs[0])
	}
}

// TestCompareJSONUnchanged pins the JSON of the built-in scenarios, recorded before
// the engine was optimised: engine changes must not change results. (Rewrite
// a golden file only for a deliberate change of behaviour: retrysim compare
// --scenario NAME --format json > testdata/compare-NAME.json.golden.)
func TestCompareJSONUnchanged(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"overload-burst", "rate-limited-burst", "long-outage", "aws-occ-contention"} {
		out, errOut, code, _ := runCLI(t, "compare", "--scenario", s, "--format", "json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", s, code, errOut)
		}
		if want := readGolden(t, s); out != want {
			t.Errorf("%s: JSON differs from testdata/compare-%s.json.golden:\n%s", s, s, out)
		}
		golden.Check(t, "compare-"+s+".json.stderr", []byte(errOut))
	}
}

func TestCompareVerbose(t *testing.T) {
	t.Parallel()
	quiet, _, _, _ := runCLI(t, "compare", "--format", "json")
	loud, errOut, code, _ := runCLI(t, "compare", "--format", "json", "--verbose")
	if code != 0 || loud != quiet {
		t.Fatalf("--verbose changed stdout (exit %d)", code)
	}
	for _, want := range []string{"capped-exponential: 20 clients, 204 events", "total: 809 events in ", "events/s"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}
