package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/policies/attemptlog"
)

// The attempt log of compare is the same bytes on one core and on two, and
// run after run; it tells the table's attempts.
func TestCompareAttemptLogDeterministic(t *testing.T) {
	dir := t.TempDir()
	var logs [][]byte
	for i, procs := range []int{1, 2} {
		path := filepath.Join(dir, []string{"one.jsonl", "two.jsonl"}[i])
		prev := runtime.GOMAXPROCS(procs)
		out, stderr, code, _ := runCLI(t, "compare", "--seed", "3", "--format", "json", "--attempt-log", path)
		runtime.GOMAXPROCS(prev)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, b)
		if i == 0 {
			checkLogAgainstTable(t, b, out)
		}
	}
	if !bytes.Equal(logs[0], logs[1]) {
		t.Errorf("the attempt log differs between GOMAXPROCS 1 and 2 (%d and %d bytes)", len(logs[0]), len(logs[1]))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("files left beside the logs: %v", entries)
	}
}

// checkLogAgainstTable checks that every policy of the JSON report has as
// many attempt records in the log as the report counts attempts.
func checkLogAgainstTable(t *testing.T, log []byte, report string) {
	t.Helper()
	perPolicy := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(log))
	for sc.Scan() {
		var r struct {
			Schema, Record, Policy string
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Schema != attemptlog.Schema {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if r.Record == attemptlog.KindAttempt {
			perPolicy[r.Policy]++
		}
	}
	var doc struct {
		Results []struct {
			Policy    string `json:"policy"`
			Attempts  int    `json:"attempts"`
			Completed int    `json:"completed"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(report), &doc); err != nil || len(doc.Results) < 2 {
		t.Fatalf("report: %v, %d results", err, len(doc.Results))
	}
	for _, p := range doc.Results {
		if perPolicy[p.Policy] != p.Attempts {
			t.Errorf("policy %s: %d attempts logged, %d in the report", p.Policy, perPolicy[p.Policy], p.Attempts)
		}
	}
}

// --attempt-log needs one seed; a bad path fails before running; nothing
// is left behind.
func TestCompareAttemptLogUsage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log.jsonl")
	_, stderr, code, _ := runCLI(t, "compare", "--seeds", "3", "--attempt-log", path)
	if code != 2 || !strings.Contains(stderr, "--attempt-log") || !strings.Contains(stderr, "--seeds 1") {
		t.Errorf("--seeds 3: exit %d, %q", code, stderr)
	}
	_, stderr, code, _ = runCLI(t, "compare", "--attempt-log", filepath.Join(dir, "no", "such", "dir.jsonl"))
	if code != 2 || !strings.Contains(stderr, "cannot create it") {
		t.Errorf("bad path: exit %d, %q", code, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}
