package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/retrysim/retrysim/internal/golden"
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

// Every retrysim command shown in the README and docs/ must run and succeed,
// from the repository root as a reader would run it.
func TestDocumentedCommandsRun(t *testing.T) {
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
	t.Chdir(root)
	for _, c := range all {
		t.Run(c.doc+": "+strings.Join(c.args, " "), func(t *testing.T) {
			// Commands that write files write them to a scratch directory.
			args := slices.Clone(c.args)
			for i := range args[:len(args)-1] {
				if args[i] == "--out" || args[i] == "--plot" {
					args[i+1] = filepath.Join(t.TempDir(), filepath.Base(args[i+1]))
				}
			}
			out, errOut, code := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if out == "" && !slices.Contains(args, "--out") {
				t.Fatal("printed nothing")
			}
		})
	}
}

// The sample output in the README must be what the command prints.
func TestReadmeSampleOutput(t *testing.T) {
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
	got, _, _ := runCLI(t, "compare")
	if got != sample {
		t.Fatalf("README sample output is stale:\n%s", golden.Diff(sample, got))
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// builtBinary builds retrysim once per test run and returns its path.
func builtBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "retrysim-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "retrysim")
		if runtime.GOOS == "windows" {
			binPath += ".exe"
		}
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// A binary built on its own must carry the built-in scenarios: run it from an
// empty directory, with no checkout beside it.
func TestInstalledBinaryNeedsNoCheckout(t *testing.T) {
	bin := builtBinary(t)
	run := exec.Command(bin, "compare", "--format", "csv")
	run.Dir = t.TempDir()
	out, err := run.Output()
	if err != nil {
		t.Fatalf("installed binary: %v", err)
	}
	inProcess, _, _ := runCLI(t, "compare", "--format", "csv")
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
// scratch directory holding a copy of scenarios.yaml. "go install …@latest"
// lines are skipped: the binary is already built.
func TestDocumentedScriptsRun(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	bin := builtBinary(t)
	scenariosYAML, err := os.ReadFile(filepath.Join(docsRoot, "scenarios.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pages, _ := filepath.Glob(filepath.Join(docsRoot, "docs", "*.md"))
	pages = append(pages, filepath.Join(docsRoot, "README.md"))
	n := 0
	for _, page := range pages {
		for i, script := range bashBlocks(t, page) {
			n++
			name := fmt.Sprintf("%s#%d", filepath.Base(page), i+1)
			t.Run(name, func(t *testing.T) {
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
					cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
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
		case in && strings.HasPrefix(trimmed, "go install ") && strings.HasSuffix(trimmed, "@latest"):
			cur = append(cur, ": skipped in the test: "+trimmed)
		case in:
			cur = append(cur, line)
		}
	}
	return blocks
}
