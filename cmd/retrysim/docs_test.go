package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/internal/golden"
	"github.com/retrysim/retrysim/scenarios"
)

// docCommands returns the retrysim command lines in the ```sh blocks of a
// markdown page (a path under docsRoot), without trailing comments; "go run
// ./cmd/retrysim" counts as retrysim. Each command starts with "retrysim".
func docCommands(t *testing.T, page string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(docsRoot, page))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds [][]string
	inSh := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "```"):
			inSh = !inSh && line == "```sh"
			continue
		case !inSh:
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		line = strings.Replace(line, "go run ./cmd/retrysim", "retrysim", 1)
		if fields := strings.Fields(line); len(fields) > 1 && fields[0] == "retrysim" {
			cmds = append(cmds, fields)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cmds
}

// bigClients is the size from which a scenario is too big to run more
// than once in the tests (huge-burst: 1,000,000 clients, about 5 s).
const bigClients = 100_000

// Every retrysim command shown in the README and docs/ must run and succeed,
// from the repository root as a reader would run it: through the built
// binary, each in parallel. What is checked is the exit status and that a
// command printed something (or wrote its --out file); the output itself is
// pinned by the golden tests. The README's huge-burst command (1,000,000
// clients) runs here, once: it is the only run of a scenario that big in
// the whole test suite (TestDocumentedScriptsRun leaves such scenarios out of
// 'check'; .ci/run checks their expectations with 'retrysim check --file
// scenarios.yaml').
func TestDocumentedCommandsRun(t *testing.T) {
	t.Parallel()
	bin := builtBinary(t)
	docs, _ := filepath.Glob(filepath.Join(docsRoot, "docs", "*.md"))
	docs = append(docs, filepath.Join(docsRoot, "README.md"))
	root, err := filepath.Abs(docsRoot)
	if err != nil {
		t.Fatal(err)
	}
	type found struct {
		doc  string
		args []string
	}
	var all []found
	for _, doc := range docs {
		rel, _ := filepath.Rel(docsRoot, doc)
		if rel == filepath.Join("docs", "plots.md") {
			continue // TestDocsPlots runs these and checks the images they make
		}
		for _, args := range docCommands(t, rel) {
			all = append(all, found{rel, args[1:]})
		}
	}
	if len(all) < 5 {
		t.Fatalf("found only %d documented commands: the extraction is broken", len(all))
	}
	for _, c := range all {
		t.Run(c.doc+": "+strings.Join(c.args, " "), func(t *testing.T) {
			t.Parallel()
			// Commands that write files write them to a scratch directory.
			args := slices.Clone(c.args)
			for i := range args[:len(args)-1] {
				if args[i] == "--out" || args[i] == "--plot" || args[i] == "--plot-dir" || args[i] == "--junit" || args[i] == "--attempt-log" {
					args[i+1] = filepath.Join(t.TempDir(), filepath.Base(args[i+1]))
				}
			}
			cmd := exec.Command(bin, args...)
			cmd.Dir = root
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v: %s", err, stderr.Bytes())
			}
			if stdout.Len() == 0 && !slices.Contains(args, "--out") && !slices.Contains(args, "--plot-dir") {
				t.Fatal("printed nothing")
			}
		})
	}
}

// The sample output in the README must be what the command prints.
func TestReadmeSampleOutput(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(docsRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "```text\nscenario overload-burst")
	if start < 0 {
		t.Fatal("README has no sample output block")
	}
	start += len("```text\n")
	end := strings.Index(readme[start:], "```")
	sample := readme[start : start+end]
	got, _, _, _ := runCLI(t, "compare")
	if got != sample {
		t.Fatalf("README sample output is stale:\n%s", golden.Diff(sample, got))
	}
}

// A binary built on its own must carry the built-in scenarios: run it from an
// empty directory, with no checkout beside it.
func TestInstalledBinaryNeedsNoCheckout(t *testing.T) {
	t.Parallel()
	bin := builtBinary(t)
	run := exec.Command(bin, "compare", "--format", "csv")
	run.Dir = t.TempDir()
	out, err := run.Output()
	if err != nil {
		t.Fatalf("installed binary: %v", err)
	}
	inProcess, _, _, _ := runCLI(t, "compare", "--format", "csv")
	if string(out) != inProcess {
		t.Fatalf("installed binary printed\n%s\nwant\n%s", out, inProcess)
	}
	bad := exec.Command(bin, "compare", "--scenario", "nope")
	if err := bad.Run(); err == nil || bad.ProcessState.ExitCode() != 2 {
		t.Fatalf("unknown scenario: err %v, want exit status 2", err)
	}
}

// The ```bash blocks of the README and docs/ are scripts (baselines, CI):
// each must run under bash -euo pipefail with the built binary on PATH, in a
// scratch directory holding a copy of scenarios.yaml. Lines that install
// retrysim ("go install ./cmd/retrysim") are skipped: the binary is
// already built.
//
// 'retrysim check' without --scenario checks every scenario, huge-burst
// (1,000,000 clients) included, and these scripts run it several times. So
// that the suite runs that scenario at most once (see
// TestDocumentedCommandsRun), a shell function in front of the binary adds
// --scenario for every scenario below bigClients clients to such a check.
// The scripts' flow, exit statuses and files are tested as written; the
// expectations of the big scenarios are not (.ci/run checks them).
func TestDocumentedScriptsRun(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	bin := builtBinary(t)
	scenariosYAML, err := os.ReadFile(filepath.Join(docsRoot, "scenarios.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	prelude := smallCheckPrelude(t)
	pages, _ := filepath.Glob(filepath.Join(docsRoot, "docs", "*.md"))
	pages = append(pages, filepath.Join(docsRoot, "README.md"))
	n := 0
	for _, page := range pages {
		for i, script := range bashBlocks(t, page) {
			n++
			name := fmt.Sprintf("%s#%d", filepath.Base(page), i+1)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "scenarios.yaml"), scenariosYAML, 0o644); err != nil {
					t.Fatal(err)
				}
				// A script with a branch may take the other one once it has
				// left files behind: run those twice.
				rounds := 1
				if strings.Contains(script, "if ") {
					rounds = 2
				}
				for round := range rounds {
					cmd := exec.Command("bash", "-euo", "pipefail", "-c", prelude+script)
					cmd.Dir = dir
					cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("round %d: %v\n%s\nscript:\n%s", round+1, err, out, script)
					}
				}
			})
		}
	}
	if n == 0 {
		t.Fatal("found no bash blocks: the extraction is broken")
	}
}

// smallCheckPrelude is a bash function named retrysim that runs the binary,
// adding --scenario NAME for every built-in scenario with expectations and
// fewer than bigClients clients to a 'check' that names no scenario.
func smallCheckPrelude(t *testing.T) string {
	t.Helper()
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	skipped := 0
	for _, s := range f.Scenarios {
		if len(s.Expect) == 0 {
			continue
		}
		if s.Operations() >= bigClients {
			skipped++
			continue
		}
		names = append(names, "--scenario "+s.Name)
	}
	if skipped == 0 {
		t.Fatal("no built-in scenario is big: the prelude is no longer needed")
	}
	return `retrysim() {
  if [ "${1:-}" = check ] && [[ " $* " != *" --scenario "* && " $* " != *" -s "* ]]; then
    shift
    command retrysim check ` + strings.Join(names, " ") + ` "$@"
  else
    command retrysim "$@"
  fi
}
`
}

// bashBlocks returns the ```bash blocks of a markdown page.
func bashBlocks(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur []string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !in && trimmed == "```bash":
			in, cur = true, nil
		case in && strings.HasPrefix(trimmed, "```"):
			in = false
			blocks = append(blocks, strings.Join(cur, "\n"))
		case in && (strings.Contains(trimmed, "go install ./cmd/retrysim") || strings.Contains(trimmed, "go install github.com/retrysim/retrysim/cmd/retrysim@")):
			cur = append(cur, "# skipped in the test: "+trimmed)
		case in:
			cur = append(cur, line)
		}
	}
	return blocks
}

// The files that the commands shown in the README and docs/ write, run from
// the repository root as a reader runs them, go where git ignores them: no
// tracked file changes and no untracked one appears. (docs/plots.md's
// commands write docs/img, which is tracked and checked by TestDocsPlots.)
func TestDocumentedOutputsAreIgnored(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root, err := filepath.Abs(docsRoot)
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("git", "-C", root, "rev-parse", "--is-inside-work-tree").Run(); err != nil {
		t.Skip("not a git checkout")
	}
	docs, _ := filepath.Glob(filepath.Join(docsRoot, "docs", "*.md"))
	docs = append(docs, filepath.Join(docsRoot, "README.md"))
	checked := 0
	for _, doc := range docs {
		rel, _ := filepath.Rel(docsRoot, doc)
		if rel == filepath.Join("docs", "plots.md") {
			continue
		}
		for _, args := range docCommands(t, rel) {
			for i := range args[:len(args)-1] {
				path := args[i+1]
				if path == "-" || filepath.IsAbs(path) {
					continue
				}
				switch args[i] {
				case "--plot-dir", "--plot":
					path = filepath.Join(path, "timeline.png") // a file in it
				case "--out", "-o", "--junit", "--attempt-log":
				default:
					continue
				}
				checked++
				if err := exec.Command("git", "-C", root, "check-ignore", "-q", "--", path).Run(); err != nil {
					t.Errorf("%s: %s writes %s, which git does not ignore (or tracks)", rel, strings.Join(args, " "), path)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no documented command writes a file: the extraction is broken")
	}
}
