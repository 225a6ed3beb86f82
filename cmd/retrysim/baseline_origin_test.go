package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

// record runs 'retrysim compare ARGS --format json' and writes its report.
func record(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, errOut, code, _ := runCLI(t, append(append([]string{"compare"}, args...), "--format", "json")...)
	if code != 0 {
		t.Fatalf("compare %v: exit %d: %s", args, code, errOut)
	}
	return writeFile(t, name, out)
}

// A baseline recorded with --param runs with it again: without --param
// (the report says so), or with the same values; other values are bad
// input (exit 2) naming the parameter. Single-seed and multi-seed alike.
func TestBaselineRunsWithItsParams(t *testing.T) {
	t.Parallel()
	file := burstFile(t, "500ms", `"completed >= 1"`)
	for _, seeds := range []string{"1", "6"} {
		b := record(t, "b40.json", "--file", file, "--seeds", seeds, "--param", "clients=40")
		out, errOut, code, _ := runCLI(t, "check", "--file", file, "--baseline", b)
		if code != 0 || !strings.Contains(out, b+" was recorded with --param clients=40: the check runs it so") || strings.Contains(out, "FAIL") {
			t.Errorf("seeds %s, no --param: exit %d, want 0 and a note\n%s%s", seeds, code, out, errOut)
		}
		if out, errOut, code, _ := runCLI(t, "check", "--file", file, "--baseline", b, "--param", "clients=40"); code != 0 || strings.Contains(out, "the check runs it so") {
			t.Errorf("seeds %s, the same --param: exit %d\n%s%s", seeds, code, out, errOut)
		}
		out, errOut, code, _ = runCLI(t, "check", "--file", file, "--baseline", b, "--param", "clients=20")
		if code != 2 || !strings.Contains(errOut, "baseline "+b+" is not of what this check runs: --param differs: clients=20 here, clients=40 when recorded") ||
			!strings.Contains(errOut, "--accept-scenario-change") || out != "" {
			t.Errorf("seeds %s, --param clients=20: exit %d, want 2 naming clients\n%s%s", seeds, code, out, errOut)
		}
		// Accepted on purpose: compared, and the report says so.
		out, errOut, code, _ = runCLI(t, "check", "--file", file, "--baseline", b, "--param", "clients=20", "--accept-scenario-change")
		if code == 2 || !strings.Contains(out, "compared although it is not of what this check runs (--accept-scenario-change): --param differs: clients=20 here") {
			t.Errorf("seeds %s, accepted: exit %d\n%s%s", seeds, code, out, errOut)
		}
	}
	// --param and --accept-scenario-change apply to baselines.
	for _, flag := range [][]string{{"--param", "clients=20"}, {"--accept-scenario-change"}} {
		if _, errOut, code, _ := runCLI(t, append([]string{"check", "--file", file}, flag...)...); code != 2 || !strings.Contains(errOut, "applies to --baseline") {
			t.Errorf("%v without --baseline: exit %d, %q", flag, code, errOut)
		}
	}
}

// A baseline of another scenario file (the outage made longer) is refused,
// naming the setting that changed; --accept-scenario-change compares it
// anyway and says so. A change of policy is what the gate is for: it is
// compared, never refused.
func TestBaselineOfAnotherScenario(t *testing.T) {
	t.Parallel()
	file := burstFile(t, "500ms", `"completed >= 1"`)
	b := record(t, "b.json", "--file", file)
	longer := writeFile(t, "longer.yaml", strings.Replace(strings.NewReplacer("{{base}}", "500ms", "{{expect}}", `"completed >= 1"`).Replace(burst), "duration: 2s", "duration: 5s", 1))
	out, errOut, code, _ := runCLI(t, "check", "--file", longer, "--baseline", b)
	for _, want := range []string{
		"baseline " + b + " is not of what this check runs: scenario burst is not the one recorded",
		"server.phases[0].duration: 2s, now 5s",
		"it was recorded from " + file + ", this check reads " + longer,
		"Record it again ('retrysim compare --file " + longer + " --scenario burst --seed 1 --format json')",
	} {
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("longer outage: exit %d, want 2 saying %q\n%s%s", code, want, out, errOut)
		}
	}
	out, errOut, code, _ = runCLI(t, "check", "--file", longer, "--baseline", b, "--accept-scenario-change")
	if code != 1 || !strings.Contains(out, "(--accept-scenario-change): scenario burst is not the one recorded") || !strings.Contains(out, "server.phases[0].duration: 2s, now 5s") {
		t.Errorf("longer outage, accepted: exit %d, want 1 (it is worse) and the acceptance stated\n%s%s", code, out, errOut)
	}
	// The same scenario in another file: compared, with a note.
	copied := writeFile(t, "copy.yaml", strings.NewReplacer("{{base}}", "500ms", "{{expect}}", `"completed >= 1"`).Replace(burst))
	if out, errOut, code, _ := runCLI(t, "check", "--file", copied, "--baseline", b); code != 0 || !strings.Contains(out, "recorded from "+file+" and checked against "+copied+": the same world") {
		t.Errorf("a copy of the file: exit %d\n%s%s", code, out, errOut)
	}
	// Other policies (a slower backoff, other rules) are compared: a
	// regression fails (exit 1), it is not refused.
	slower := writeFile(t, "slower.yaml", strings.Replace(strings.NewReplacer("{{base}}", "4s", "{{expect}}", `"completed >= 1"`).Replace(burst), "max_attempts: 8", "max_attempts: 6", 1))
	out, errOut, code, _ = runCLI(t, "check", "--file", slower, "--baseline", b)
	if code != 1 || strings.Contains(out+errOut, "not of what this check runs") || !strings.Contains(out, "completed fell from 18") {
		t.Errorf("a policy change: exit %d, want 1 (compared and worse)\n%s%s", code, out, errOut)
	}
}

// Without --file, a baseline of a scenario that is not built in says to
// pass --file, naming the file it was recorded from.
func TestBaselineNeedsItsFile(t *testing.T) {
	t.Parallel()
	file := burstFile(t, "500ms", `"completed >= 1"`)
	b := record(t, "b.json", "--file", file)
	_, errOut, code, _ := runCLI(t, "check", "--baseline", b)
	want := "baseline " + b + ` is of scenario "burst", which is not built in: pass --file with ` + file + ", the file it was recorded from"
	if code != 2 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, %q; want 2 and %q", code, errOut, want)
	}
}

// A baseline written before reports recorded their origin is compared as
// before, with a warning that it cannot be verified.
func TestBaselineWithoutOrigin(t *testing.T) {
	t.Parallel()
	file := burstFile(t, "500ms", `"completed >= 1"`)
	for _, seeds := range []string{"1", "6"} {
		var doc map[string]any
		data, _, _, _ := runCLI(t, "compare", "--file", file, "--seeds", seeds, "--format", "json")
		if err := json.Unmarshal([]byte(data), &doc); err != nil || doc["origin"] == nil {
			t.Fatalf("seeds %s: the report has no origin (%v)", seeds, err)
		}
		old := writeFile(t, "old.json", editReport(t, data, func(d map[string]any) { delete(d, "origin") }))
		out, errOut, code, _ := runCLI(t, "check", "--file", file, "--baseline", old)
		if code != 0 || !strings.Contains(out, old+" does not record what produced it (written by an older retrysim): it cannot be verified") {
			t.Errorf("seeds %s, no origin: exit %d\n%s%s", seeds, code, out, errOut)
		}
		// An origin edited by hand is refused: its world must hash to its digest.
		edited := writeFile(t, "edited.json", strings.Replace(data, `"workload.clients = 20"`, `"workload.clients = 21"`, 1))
		if _, errOut, code, _ := runCLI(t, "check", "--file", file, "--baseline", edited); code != 2 || !strings.Contains(errOut, "the world recorded does not have the digest recorded") {
			t.Errorf("seeds %s, edited origin: exit %d, %q", seeds, code, errOut)
		}
	}
}

// The origin (and so the digest) is the same in every run and on any
// number of cores.
func TestOriginDeterministic(t *testing.T) {
	file := burstFile(t, "500ms", `"completed >= 1"`)
	var outs []string
	for _, procs := range []int{1, 2} {
		prev := runtime.GOMAXPROCS(procs)
		out, _, code, _ := runCLI(t, "compare", "--file", file, "--seeds", "4", "--param", "clients=30", "--format", "json")
		runtime.GOMAXPROCS(prev)
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		var doc struct {
			Origin json.RawMessage `json:"origin"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Origin) == 0 {
			t.Fatalf("no origin: %v", err)
		}
		outs = append(outs, string(doc.Origin))
	}
	if outs[0] != outs[1] {
		t.Errorf("the origin depends on the run or GOMAXPROCS:\n%s\n%s", outs[0], outs[1])
	}
	if !strings.Contains(outs[0], `"clients=30"`) || !strings.Contains(outs[0], `"workload.clients = 30"`) {
		t.Errorf("origin lacks the --param value or its effect:\n%s", outs[0])
	}
}

// diff shows where its reports came from and warns when they are of
// other worlds or --param values.
func TestDiffShowsOrigins(t *testing.T) {
	t.Parallel()
	file := burstFile(t, "500ms", `"completed >= 1"`)
	longer := writeFile(t, "longer.yaml", strings.Replace(strings.NewReplacer("{{base}}", "500ms", "{{expect}}", `"completed >= 1"`).Replace(burst), "duration: 2s", "duration: 5s", 1))
	a := record(t, "a.json", "--file", file)
	b := record(t, "b.json", "--file", longer, "--param", "clients=30")
	_, errOut, code, _ := runCLI(t, "diff", a, b)
	for _, want := range []string{
		"retrysim: " + a + ": scenario file " + file + ", digest sha256:",
		"retrysim: " + b + ": scenario file " + longer + ", --param clients=30, digest sha256:",
		"warning: " + a + " and " + b + " were recorded with other --param values: clients=30 in " + b + ", not set in " + a,
		"warning: " + a + " and " + b + " are of scenarios with other worlds",
		"server.phases[0].duration: 2s, now 5s, workload.clients: 20, now 30",
	} {
		if code != 0 || !strings.Contains(errOut, want) {
			t.Errorf("diff: exit %d, stderr lacks %q:\n%s", code, want, errOut)
		}
	}
	if _, errOut, code, _ := runCLI(t, "diff", a, a); code != 0 || strings.Contains(errOut, "warning") {
		t.Errorf("a report against itself: exit %d, %q", code, errOut)
	}
}
