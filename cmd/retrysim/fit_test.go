package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fit writes a scenario that compare runs; with --compare it prints the
// trade table of the policy that ran and the candidates.
func TestFitCommand(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "day.jsonl")
	if _, stderr, code, _ := runCLI(t, "compare", "--scenario", "overload-burst", "--attempt-log", log); code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	_, stderr, code, _ := runCLI(t, "fit", log)
	if code != 2 || !strings.Contains(stderr, "--log-policy") {
		t.Errorf("a log of 4 policies without --log-policy: exit %d, %s", code, stderr)
	}
	out := filepath.Join(dir, "fitted.yaml")
	stdout, stderr, code, _ := runCLI(t, "fit", log, "--log-policy", "full-jitter", "--out", out, "--policy", "gated", "--compare")
	if code != 0 {
		t.Fatalf("fit --compare: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"as-run", "gated"} {
		if !strings.Contains(stdout, "| "+want) {
			t.Errorf("the table has no row %s:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "wrote "+out) {
		t.Errorf("stderr does not say what was written: %s", stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "fitted.arrivals.csv")); err != nil {
		t.Error(err)
	}
	if _, stderr, code, _ := runCLI(t, "compare", "--file", out); code != 0 {
		t.Errorf("compare --file the fitted scenario: exit %d: %s", code, stderr)
	}
}

// A bad line is an error (exit 2) naming the file, line and field; with
// --lenient it is skipped and counted.
func TestFitBadLine(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "calls.csv")
	os.WriteFile(log, []byte("ts,code\n1.5,529\n2.5,abc\n3.5,200\n"), 0o644)
	_, stderr, code, _ := runCLI(t, "fit", log, "--map", "sent=ts,status=code")
	if code != 2 || !strings.Contains(stderr, log+":3: code: ") {
		t.Errorf("exit %d, %q; want 2 and %s:3: code", code, stderr, log)
	}
	if _, err := os.Stat(filepath.Join(dir, "calls.fit.yaml")); !os.IsNotExist(err) {
		t.Errorf("a failed fit wrote its scenario (%v)", err)
	}
	_, stderr, code, _ = runCLI(t, "fit", log, "--map", "sent=ts,status=code", "--lenient")
	if code != 0 || !strings.Contains(stderr, "1 bad lines skipped") {
		t.Errorf("--lenient: exit %d, %s", code, stderr)
	}
	for _, args := range [][]string{{"fit", log, "--map", "when=ts"}, {"fit", log, "--policy", "no such/file"}, {"fit", log, "--out", log}, {"fit"}} {
		if _, stderr, code, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%q: exit %d, %s; want 2", args, code, stderr)
		}
	}
}

// A sharded run copies every trace into each shard file, and keeps to the
// scenario file's 1 MiB bound for them: an arrival trace over it (120,000
// rows, two minutes with arrivals every millisecond, as fit writes for a
// busy day) runs unsharded, and --shard says so instead of blaming a
// scenario file's limit.
func TestShardRefusesLargeArrivalTrace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var csv strings.Builder
	csv.WriteString("start,count\n")
	for i := range 120_000 {
		fmt.Fprintf(&csv, "%.3fs,1\n", float64(i)/1000)
	}
	if csv.Len() <= 1<<20 {
		t.Fatalf("the trace is %d bytes, not over 1 MiB", csv.Len())
	}
	if err := os.WriteFile(filepath.Join(dir, "day.arrivals.csv"), []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	yml := filepath.Join(dir, "day.yaml")
	if err := os.WriteFile(yml, []byte("scenarios:\n  - name: day\n    server: {phases: [{admit: 100000, window: 1s}]}\n    clients: {type: trace, trace: day.arrivals.csv, max_attempts: 2}\n    policies: [{name: full-jitter}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code, _ := runCLI(t, "compare", "--file", yml); code != 0 {
		t.Fatalf("unsharded: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code, _ := runCLI(t, "compare", "--file", yml, "--seeds", "2", "--shard", "0/2", "--shard-out", filepath.Join(dir, "s0.json"))
	if code != 2 || !strings.Contains(errOut, "day.arrivals.csv is larger than 1 MiB, the most a sharded run copies into each shard file: run it without --shard") {
		t.Errorf("sharded: exit %d, stderr %q", code, errOut)
	}
}

// A log whose operations name sessions fits to the sessions as they
// happened: session s1 calls at 0 (ended 0.1 s) and again 0.9 s later;
// s2 calls once at 0.5 s. The written trace says so, and the scenario
// runs.
func TestFitChainsSessions(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "calls.csv")
	csv := "sent,latency_ms,op,attempt,session,status\n" +
		"2026-03-03T14:00:00.000Z,100,a,1,s1,200\n" +
		"2026-03-03T14:00:00.500Z,100,c,1,s2,200\n" +
		"2026-03-03T14:00:01.000Z,100,b,1,s1,529\n" +
		"2026-03-03T14:00:01.600Z,100,b,2,s1,200\n"
	if err := os.WriteFile(log, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code, _ := runCLI(t, "fit", log)
	if code != 0 || !strings.Contains(stderr, "2 sessions chained") {
		t.Fatalf("fit: exit %d: %s", code, stderr)
	}
	arr, err := os.ReadFile(filepath.Join(dir, "calls.fit.arrivals.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(arr), "start,gaps\n0s,900ms\n500ms,\n") {
		t.Errorf("session trace:\n%s", arr)
	}
	if stdout, stderr, code, _ := runCLI(t, "compare", "--file", filepath.Join(dir, "calls.fit.yaml"), "--format", "csv"); code != 0 || !strings.Contains(stdout, "sessions.completed") {
		t.Errorf("compare --file: exit %d: %s\n%s", code, stderr, stdout)
	}
}
