package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestCompareGolden(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"compare_table", []string{"compare"}},
		{"compare_json", []string{"compare", "--format", "json"}},
		{"compare_markdown", []string{"compare", "--format", "markdown"}},
		{"compare_csv", []string{"compare", "--format", "csv"}},
		{"compare_rate_limited_seed7", []string{"compare", "--scenario", "rate-limited-burst", "--seed", "7"}},
		{"list", []string{"list"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code, _ := runCLI(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			checkGolden(t, tt.name, out, errOut)
		})
	}
}

// The JSON must follow the documented schema and agree with the model.
func TestCompareJSONSchema(t *testing.T) {
	t.Parallel()
	out, _, code, _ := runCLI(t, "compare", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Scenario string
		Seed     uint64
		Results  []map[string]json.RawMessage
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Scenario != "overload-burst" || doc.Seed != 1 || len(doc.Results) != 4 {
		t.Fatalf("scenario %q seed %d, %d results", doc.Scenario, doc.Seed, len(doc.Results))
	}
	keys := []string{"policy", "clients", "completed", "attempts", "retries", "gave_up", "gave_up_by", "amplification",
		"attempts_per_completion", "goodput_share", "gave_up_share", "give_up_ms", "latency_ms", "last_completion_ms"}
	for _, r := range doc.Results {
		if len(r) != len(keys) {
			t.Errorf("result has %d fields, want %d", len(r), len(keys))
		}
		for _, k := range keys {
			if _, ok := r[k]; !ok {
				t.Errorf("result lacks %q", k)
			}
		}
	}
	if string(doc.Results[1]["policy"]) != `"capped-exponential"` || string(doc.Results[1]["completed"]) != "18" {
		t.Fatalf("second result: %s completed %s", doc.Results[1]["policy"], doc.Results[1]["completed"])
	}
}

// Output must not depend on how many cores run it, nor on the run. The
// contention scenario decides writes after they arrive (sim.Decider) and
// runs its seeds in parallel.
func TestCompareDeterministicAcrossGOMAXPROCS(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	for _, args := range [][]string{
		{"compare", "--scenario", "long-outage", "--format", "json"},
		{"compare", "--scenario", "aws-occ-contention", "--seeds", "4", "--format", "json"},
		{"compare", "--scenario", "metastable-retry-storm", "--seeds", "3", "--format", "json"},
		{"compare", "--scenario", "stability-sim-metastable", "--seeds", "3", "--format", "json"},
		{"compare", "--scenario", "pool-cooldown", "--seeds", "2", "--format", "json"},
	} {
		run := func(args ...string) string {
			t.Helper()
			out, stderr, code, err := runCLI(t, args...)
			if err != nil || code != 0 || out == "" {
				t.Fatalf("%v: exit %d, %v\n%s", args, code, err, stderr)
			}
			return out
		}
		runtime.GOMAXPROCS(1)
		one := run(args...)
		runtime.GOMAXPROCS(2)
		two := run(args...)
		again := run(args...)
		if one != two || two != again {
			t.Fatalf("%s: output differs between GOMAXPROCS 1 and 2 or between runs", args[2])
		}
		other := run(append(args, "--seed", "2")...)
		if other == one {
			t.Fatalf("%s: seed 2 gave the same output as seed 1: the jittered policies ignore the seed", args[2])
		}
	}
}

func TestCompareWithFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mine.yaml")
	src := `scenarios:
  - name: tiny
    server:
      phases:
        - admit: 1
          window: 1s
    clients: {count: 3, max_attempts: 5}
    policies:
      - name: capped-exponential
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code, _ := runCLI(t, "compare", "--file", path, "--format", "csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// 3 clients at t=0, 1 admitted per second: the others retry at 0.6 s
	// (both rejected: the window is spent), 1.7 s (one admitted), 3.8 s
	// (the last admitted): 3+2+2+1 attempts.
	want := "scenario,seed,policy,clients,completed,attempts,retries,gave_up," +
		"gave_up_by.attempts,gave_up_by.deadline,gave_up_by.terminal,gave_up_by.queue_full,amplification," +
		"attempts_per_completion,goodput_share,gave_up_share,give_up_p50_ms,give_up_p99_ms,mean_ms,p50_ms,p95_ms,p99_ms,last_completion_ms\n" +
		"tiny,1,capped-exponential,3,3,8,5,0,0,0,0,0,2.67,2.67,1.00,0.00,,,1933.3,1800.0,3900.0,3900.0,3900.0\n"
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

func TestUsageAndInputErrors(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("scenarios:\n  - name: x\n    clients: {count: 0}\n"), 0o644)
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown flag", []string{"compare", "--bogus"}, 2, "unknown flag --bogus; 'retrysim compare --help' lists the flags"},
		{"misspelt flag", []string{"compare", "--seedz", "3"}, 2, "unknown flag --seedz (did you mean --seed?)"},
		{"flag before the command", []string{"--seeds", "20", "compare"}, 2, "unknown flag --seeds before the command: a command's flags go after it, e.g. 'retrysim compare --seeds ...'"},
		{"misspelt command", []string{"comapre"}, 2, `unknown command "comapre" (did you mean "compare"?)`},
		{"misspelt scenario", []string{"compare", "--scenario", "overload-burts"}, 2, `no scenario "overload-burts" (did you mean "overload-burst"?)`},
		{"misspelt policy", []string{"compare", "--vs", "gatd"}, 2, `has no such policy (did you mean "gated"?)`},
		{"unknown format", []string{"compare", "--format", "xml"}, 2, `unknown format "xml"`},
		{"unknown scenario", []string{"compare", "--scenario", "nope"}, 2, `no scenario "nope" (have: overload-burst`},
		{"missing file", []string{"compare", "--file", "/nonexistent/x.yaml"}, 2, "/nonexistent/x.yaml"},
		{"bad file", []string{"compare", "--file", bad}, 2, bad + ":3:22: scenarios[0].clients.count: must be between 1"},
		{"bad seed", []string{"compare", "--seed", "-1"}, 2, `invalid value "-1" for flag --seed`},
		{"stray argument", []string{"compare", "extra"}, 2, "compare takes no arguments"},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code, _ := runCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, errOut, tt.code, tt.want)
			}
			if out != "" {
				t.Fatalf("an error run wrote to stdout: %q", out)
			}
		})
	}
}

func TestHelpExplains(t *testing.T) {
	t.Parallel()
	out, _, code, _ := runCLI(t, "compare", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--scenario", "--file", "--seed", "--format", "Examples:"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare --help lacks %q", want)
		}
	}
}
