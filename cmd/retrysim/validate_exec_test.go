package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// validate --exec's bad input: exit 2, the flag or field named.
func TestValidateExecBadInput(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "e.yaml", `scenarios:
  - name: e
    server: {phases: [{reject: overloaded}]}
    clients: {count: 3, max_attempts: 3}
    policies: [{name: anthropic-sdk-go}, {name: gated, max_attempts: 3}, {name: breaking, type: full-jitter, max_attempts: 3, breaker: {open_for: 5s}}]
  - name: spread
    server: {phases: [{reject: overloaded}]}
    clients: {count: 3, spread: 1s, max_attempts: 3}
    policies: [{name: anthropic-sdk-go}]
`)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no preset", []string{"validate", "--file", file, "--exec", "true"}, "--exec and --preset go together"},
		{"no exec", []string{"validate", "--file", file, "--preset", "anthropic-sdk-go"}, "--exec and --preset go together"},
		{"unknown preset", []string{"validate", "--file", file, "--exec", "true", "--preset", "nope"}, `--preset "nope": scenario e has no such policy (have: anthropic-sdk-go, gated, breaking)`},
		{"spread", []string{"validate", "--file", file, "--scenario", "spread", "--exec", "true", "--preset", "anthropic-sdk-go"}, "must have a burst of clients that all start at once"},
		{"breaker", []string{"validate", "--file", file, "--exec", "true", "--preset", "breaking"}, "circuit breaker, which no harness runs"},
		{"format", []string{"validate", "--file", file, "--exec", "true", "--preset", "anthropic-sdk-go", "--format", "csv"}, "csv"},
	}
	for _, c := range cases {
		_, errOut, code, _ := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", c.name, code, errOut, c.want)
		}
	}
	// A program that sends nothing fails, naming what it should have done;
	// a gate and throttle are the program's to share (retrysim show
	// --for prints them), so such a preset runs too.
	for _, preset := range []string{"anthropic-sdk-go", "gated"} {
		if _, errOut, code, _ := runCLI(t, "validate", "--file", file, "--exec", "true", "--preset", preset); code != 1 || !strings.Contains(errOut, "0 callers sent requests; RETRYSIM_CLIENTS asked for 3") {
			t.Errorf("silent program, preset %s: exit %d, stderr %q", preset, code, errOut)
		}
	}
}

// validate --exec --format json with the real anthropic-sdk-go (the test
// binary runs the Go harness): the counts of always-529, and the JSON's
// fields. On the real clock, so behind RETRYSIM_REAL_CLOCK=1 (.ci/run).
func TestValidateExecJSON(t *testing.T) {
	if os.Getenv("RETRYSIM_REAL_CLOCK") != "1" {
		t.Skip("runs the real SDK on the real clock: set RETRYSIM_REAL_CLOCK=1, as .ci/run does")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, "a.yaml", "scenarios:\n  - name: a\n    server: {response_time: 100ms, phases: [{reject: overloaded}]}\n    clients: {count: 5}\n    policies: [{name: anthropic-sdk-go}]\n")
	out, errOut, code, _ := runCLI(t, "validate", "--file", file, "--exec", "RETRYSIM_TEST_HARNESS=1 '"+exe+"'", "--preset", "anthropic-sdk-go",
		"--speed", "10", "--seeds", "10", "--counts-only", "--format", "json")
	var res struct {
		Policy string
		Checks []struct {
			Metric   string
			Measured float64
			Agree    bool
		}
		GiveUps struct {
			MeasuredN int `json:"measured_n"`
		} `json:"give_up_ms"`
		CountsOnly bool `json:"counts_only"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Policy != "anthropic-sdk-go" || len(res.Checks) != 3 ||
		res.Checks[0].Metric != "attempts" || res.Checks[0].Measured != 15 || res.GiveUps.MeasuredN != 5 || !res.CountsOnly {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}
