package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// docs/tune.md's command, as the page shows it (its --out in dir).
func tuneDocArgs(dir string) []string {
	return []string{"tune", "--file", filepath.Join(docsRoot, "docs/examples/tune.yaml"), "--policy", "budgeted",
		"--scenario", "healthy", "--scenario", "outage",
		"--param", "budget_min_per_second=1:40:log6", "--param", "base=250ms:20s:log7",
		"--seeds", "20", "--out", filepath.Join(dir, "tuned.yaml")}
}

// The example finds a policy that meets every target; the file it writes
// passes check on the seeds tuned on and on 30 fresh ones.
func TestTuneCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, errOut, code, _ := runCLI(t, append(tuneDocArgs(dir), "--plot-dir", filepath.Join(dir, "plots"), "--plot-format", "svg")...)
	if code != 0 || !strings.Contains(out, "chosen: ") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "plots", "tune.svg")); err != nil {
		t.Errorf("--plot-dir: %v", err)
	}
	tuned := filepath.Join(dir, "tuned.yaml")
	if _, errOut, code, _ := runCLI(t, "check", "--file", tuned); code != 0 {
		t.Fatalf("check on the tuned file: exit %d\n%s", code, errOut)
	}
	data, err := os.ReadFile(tuned)
	if err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "fresh.yaml")
	if err := os.WriteFile(fresh, bytes.ReplaceAll(data, []byte("seed: 1\n"), []byte("seed: 1001\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code, _ = runCLI(t, "check", "--file", fresh, "--seeds", "30")
	if code != 0 || !strings.Contains(out, "seeds 1001..1030") {
		t.Fatalf("check on fresh seeds: exit %d\n%s\n%s", code, out, errOut)
	}
}

// docs/tune.md shows what the command prints.
func TestTuneDocSample(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile(filepath.Join(docsRoot, "docs/tune.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(page), "```text\n")
	sample, _, _ := strings.Cut(rest, "```")
	if !ok || sample == "" {
		t.Fatal("docs/tune.md has no sample output")
	}
	out, errOut, code, _ := runCLI(t, tuneDocArgs(t.TempDir())...)
	if code != 0 || out != sample {
		t.Fatalf("exit %d, %s\ndocs/tune.md's sample is stale; the command prints:\n%s", code, errOut, out)
	}
}

func TestTuneErrors(t *testing.T) {
	t.Parallel()
	example := filepath.Join(docsRoot, "docs/examples/tune.yaml")
	base := []string{"tune", "--file", example, "--policy", "budgeted", "--scenario", "healthy"}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"tune", "--param", "base=1s,2s"}, exitUsage, "tune needs --policy NAME"},
		{base, exitUsage, "tune needs --param NAME=VALUES"},
		{append(base[:len(base):len(base)], "--param", "clients=10,20"), exitUsage, "clients is a parameter of the scenario, not of a policy"},
		{append(base[:len(base):len(base)], "--param", "base=1s", "--target", "healthy: fast"), exitUsage, "--target \"healthy: fast\": no comparison"},
		{append(base[:len(base):len(base)], "--param", "base=1s", "--objective", "speed"), exitUsage, "--objective \"speed\": unknown metric"},
		{append(base[:len(base):len(base)], "--param", "base=1s", "--scenario", "nope"), exitUsage, "nope"},
		// --help says 2 to 9: 0 is not the default.
		{append(base[:len(base):len(base)], "--param", "base=1s", "--levels", "0"), exitUsage, "--levels 0: want 2 to 9"},
		{append(base[:len(base):len(base)], "--param", "base=1s", "--levels", "10"), exitUsage, "--levels 10: want 2 to 9"},
		{append(base[:len(base):len(base)], "--param", "base=1s,2s", "--target", "mean(amplification) <= 0.1", "--seeds", "2"), exitFail,
			"binding: healthy: mean(amplification) <= 0.1 holds at none of the points"},
	} {
		out, errOut, code, _ := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(out+errOut, c.want) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s%s", c.args[1:], code, c.code, c.want, out, errOut)
		}
	}
	out, _, code, _ := runCLI(t, "tune", "--help")
	for _, want := range []string{"Policy parameters: base,", "budget_min_per_second", "Examples:", "--target", "--objective"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("tune --help lacks %q", want)
		}
	}
}

// The first stage shards; the merge of its shards refines and prints what
// the whole search prints.
func TestTuneShards(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := tuneDocArgs(dir)
	args = args[:len(args)-2] // no --out
	whole, errOut, code, _ := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var files []string
	for i := range 3 {
		file := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		if _, errOut, code, _ := runCLI(t, append(slices.Clone(args), "--shard", fmt.Sprintf("%d/3", i), "--shard-out", file)...); code != 0 {
			t.Fatalf("shard %d: exit %d: %s", i, code, errOut)
		}
		files = append(files, file)
	}
	merged, errOut, code, _ := runCLI(t, append([]string{"merge"}, files...)...)
	if code != 0 || merged != whole {
		t.Fatalf("merge: exit %d, %s\n%s\nwant\n%s", code, errOut, merged, whole)
	}
}
