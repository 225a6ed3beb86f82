package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docExample returns the ```text block that follows the ```sh block whose
// command is cmd in a page of docs/ (the example of a documented rule).
func docExample(t *testing.T, page, cmd string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(docsRoot, "docs", page))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)```sh\n" + regexp.QuoteMeta(cmd) + "\n```.*?```text\n(.*?)```")
	m := re.FindSubmatch(b)
	if m == nil {
		t.Fatalf("docs/%s has no example of %q", page, cmd)
	}
	return string(m[1])
}

// docs/statistics.md's example of the survivor rule: immediate retries in
// metastable-retry-storm stop completing anything, and their earlier last
// completion is not a better one.
func TestSurvivorRuleExample(t *testing.T) {
	const cmd = "retrysim compare --scenario metastable-retry-storm --seeds 20"
	want := docExample(t, "statistics.md", cmd)
	out, _, code, err := runCLI(t, strings.Fields(cmd)[1:]...)
	if code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	for _, line := range strings.Split(strings.TrimSpace(want), "\n") {
		if !strings.Contains(squeeze(out), squeeze(line)) {
			t.Errorf("output lacks the documented line\n%s\noutput:\n%s", line, out)
		}
	}
	// ("worse, better on none" says it is better at nothing.)
	if row := regexp.MustCompile(`(?m)^\| immediate .*$`).FindString(out); strings.Contains(strings.ReplaceAll(row, "better on none", ""), "better") {
		t.Errorf("immediate, which completes less than the reference, is better at something:\n%s", out)
	}
}

// docs/statistics.md's example of the trade summary: a preset that sends
// less by completing less is a trade, not a better policy.
func TestTradeSummaryExample(t *testing.T) {
	const cmd = "retrysim compare --scenario controls-outage --seeds 20"
	want := docExample(t, "statistics.md", cmd)
	out, _, code, err := runCLI(t, strings.Fields(cmd)[1:]...)
	if code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	for _, line := range strings.Split(strings.TrimSpace(want), "\n") {
		if !strings.Contains(squeeze(out), squeeze(line)) {
			t.Errorf("output lacks the documented line\n%s\noutput:\n%s", line, out)
		}
	}
	// The summary comes first, and no preset that completes fewer is better.
	if i, j := strings.Index(out, "The trade, per policy"), strings.Index(out, "completed (higher is better)"); i < 0 || i > j {
		t.Errorf("the summary is not at the top:\n%s", out)
	}
	if regexp.MustCompile(`\| better[^|]*completes [0-9.]+ fewer`).MatchString(out) {
		t.Errorf("a policy completing fewer reads better:\n%s", out)
	}
}

// squeeze collapses runs of spaces, so that a documented table row matches
// however wide the other rows make its columns.
func squeeze(s string) string { return regexp.MustCompile(` +`).ReplaceAllString(s, " ") }

// A single-seed compare says on stderr that it is one seed, naming the
// randomised policies (not capped exponential, which draws nothing), and
// points to --seeds; --seeds and --quiet say nothing of the sort.
func TestOneSeedNote(t *testing.T) {
	out, errOut, code, _ := runCLI(t, "compare")
	if code != 0 || !strings.HasPrefix(out, "scenario overload-burst, seed 1\n") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	want := "retrysim: note: one seed (1): full-jitter, gated draw random waits, so another seed gives other numbers; --seeds 20 compares the policies over seeds, with tests\n"
	if errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	if _, errOut, _, _ := runCLI(t, "compare", "--seeds", "6"); strings.Contains(errOut, "one seed") {
		t.Errorf("--seeds 6: %q", errOut)
	}
	if _, errOut, _, _ := runCLI(t, "compare", "-q"); errOut != "" {
		t.Errorf("--quiet: %q", errOut)
	}
}

// report --all puts every scenario of the file on one page, each with its
// own summary, after a list of them; it refuses --scenario and --vs.
func TestReportAll(t *testing.T) {
	t.Parallel()
	one := `
  - name: %s
    description: %s
    server:
      phases:
        - admit: %d
          window: 1s
    clients: {count: 3, max_attempts: 5}
    policies:
      - name: capped-exponential
      - name: full-jitter
`
	path := writeFile(t, "two.yaml", "scenarios:"+fmt.Sprintf(one, "tiny", "three clients, one a second", 1)+fmt.Sprintf(one, "roomy", "three clients, three a second", 3))
	page, errOut, code, _ := runCLI(t, "report", "--all", "--file", path, "--seeds", "2", "--out", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"<title>retrysim: tiny, roomy</title>", `<a href="#scenario-1">tiny</a>`, `<a href="#scenario-2">roomy</a>`,
		`<section id="scenario-2">`, "retrysim report --file " + path + " --all --seeds 2 --out FILE.html"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, "The trade, per policy"); n != 2 {
		t.Errorf("%d trade summaries, want one per scenario", n)
	}
	for _, bad := range [][]string{{"--scenario", "tiny"}, {"--vs", "gated"}} {
		if _, errOut, code, _ := runCLI(t, append([]string{"report", "--all", "--file", path, "--out", "-"}, bad...)...); code != 2 || !strings.Contains(errOut, "--all takes no "+bad[0]) {
			t.Errorf("%v: exit %d, %q", bad, code, errOut)
		}
	}
}

// Where the workload runs agent sessions, the first screen of compare
// --seeds leads with them: the trade summary's first columns after the
// policy are the sessions', its verdicts weigh sessions, and the first
// table of statistics is sessions.completed (issue 40); docs/statistics.md
// shows the rows of docs/examples/agent-fleet.yaml.
func TestSessionsLead(t *testing.T) {
	const cmd = "retrysim compare --file docs/examples/agent-fleet.yaml --seeds 20"
	want := docExample(t, "statistics.md", cmd)
	args := strings.Fields(cmd)[1:]
	args[2] = filepath.Join(docsRoot, args[2])
	for _, run := range [][]string{args, {"compare", "--scenario", "bad-day-agents", "--seeds", "20"}, {"compare", "--scenario", "shared-key-agents", "--seeds", "20"}} {
		out, _, code, err := runCLI(t, run...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %v", run, code, err)
		}
		header := regexp.MustCompile(`(?m)^\| policy +\| sessions completed +\| sessions: cost besides calls +\| calls completed `)
		if !header.MatchString(out) {
			t.Errorf("%s: the trade summary does not lead with sessions:\n%s", run, out)
		}
		if i, j := strings.Index(out, "\nsessions.completed (higher is better)"), strings.Index(out, "\ncompleted (higher is better)"); i < 0 || i > j {
			t.Errorf("%s: sessions.completed is not the first table", run)
		}
		// (The latency tables' notes count calls: latencies are the calls'.)
		summary, _, _ := strings.Cut(out[strings.Index(out, "The trade, per policy"):], "\n\n")
		all := regexp.MustCompile(`completes [0-9.]+ (more|fewer)`).FindAllString(summary, -1)
		if len(all) == 0 || len(all) != len(regexp.MustCompile(`completes [0-9.]+ (more|fewer) sessions`).FindAllString(summary, -1)) {
			t.Errorf("%s: a verdict counts calls completed, not sessions:\n%s", run, summary)
		}
		if run[1] == "--file" {
			for _, line := range strings.Split(strings.TrimSpace(want), "\n") {
				if !strings.Contains(squeeze(out), squeeze(line)) {
					t.Errorf("output lacks the documented line\n%s\noutput:\n%s", line, out)
				}
			}
		}
	}
}
