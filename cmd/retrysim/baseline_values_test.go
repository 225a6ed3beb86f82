package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// editReport rewrites one value of a JSON report: set is given the report
// as generic JSON and changes it.
func editReport(t *testing.T, report string, set func(doc map[string]any)) string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(report), &doc); err != nil {
		t.Fatal(err)
	}
	set(doc)
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A report with an impossible count (a negative or fractional one, one
// beyond 2^53) is bad input to 'diff' and 'check --baseline' alike: exit
// 2, naming the file, the policy, the metric and the seed, as the shard
// reader refuses such values.
func TestImpossibleBaselineValues(t *testing.T) {
	t.Parallel()
	file := burstFile(t, "500ms", `"completed >= 1"`)
	multi, errOut, code, _ := runCLI(t, "compare", "--file", file, "--seeds", "6", "--format", "json")
	if code != 0 {
		t.Fatalf("compare --seeds 6: exit %d: %s", code, errOut)
	}
	single, errOut, code, _ := runCLI(t, "compare", "--file", file, "--format", "json")
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	good := writeFile(t, "good.json", multi)
	// setSeed sets completed of the first policy on the third seed.
	setSeed := func(v any) func(map[string]any) {
		return func(doc map[string]any) {
			ms := doc["policies"].([]any)[0].(map[string]any)["metrics"].([]any)
			for _, m := range ms {
				if m := m.(map[string]any); m["metric"] == "completed" {
					m["values"].([]any)[2] = v
				}
			}
		}
	}
	cases := []struct {
		name, report, want string
	}{
		{"negative", editReport(t, multi, setSeed(-3.5)), "policies[0] (capped-exponential): metrics[0]: completed on seed 3: -3.5 is not a finite number ≥ 0"},
		{"fractional", editReport(t, multi, setSeed(17.5)), "(capped-exponential): metrics[0]: completed on seed 3: 17.5 is not a count (a whole number from 0 to 2^53)"},
		{"huge", editReport(t, multi, setSeed(1e308)), "completed on seed 3: 1e+308 is not a count"},
		{"single seed", editReport(t, single, func(doc map[string]any) {
			doc["results"].([]any)[1].(map[string]any)["attempts"] = -1
		}), "results[1] (gated): attempts on seed 1: -1 is not a finite number ≥ 0"},
	}
	for _, c := range cases {
		bad := writeFile(t, "bad.json", c.report)
		wantFile := bad + ": "
		other := good
		if c.name == "single seed" {
			other = writeFile(t, "one.json", single)
		}
		for _, args := range [][]string{
			{"diff", other, bad},
			{"diff", bad, other},
			{"check", "--file", file, "--baseline", bad},
		} {
			out, errOut, code, _ := runCLI(t, args...)
			if code != 2 || !strings.Contains(errOut, wantFile) || !strings.Contains(errOut, c.want) {
				t.Errorf("%s: %v: exit %d, want 2 naming %s and saying %q\n%s%s", c.name, args[0], code, bad, c.want, out, errOut)
			}
		}
	}
}
