package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// docCommands returns the retrysim commands in the ```sh blocks of a
// markdown file, without trailing comments. "go run ./cmd/retrysim" counts
// as retrysim.
func docCommands(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
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
		if i := strings.Index(line, "#"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		line = strings.Replace(line, "go run ./cmd/retrysim", "retrysim", 1)
		if fields := strings.Fields(line); len(fields) > 1 && fields[0] == "retrysim" {
			cmds = append(cmds, fields[1:])
		}
	}
	return cmds
}

// Every retrysim command shown in the README and docs/ must run and succeed,
// from the repository root as a reader would run it.
func TestDocumentedCommandsRun(t *testing.T) {
	docs, _ := filepath.Glob("../../docs/*.md")
	docs = append(docs, "../../README.md")
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	type found struct {
		doc  string
		args []string
	}
	var all []found
	for _, doc := range docs {
		for _, args := range docCommands(t, doc) {
			all = append(all, found{filepath.Base(doc), args})
		}
	}
	if len(all) < 5 {
		t.Fatalf("found only %d documented commands: the extraction is broken", len(all))
	}
	t.Chdir(root)
	for _, c := range all {
		t.Run(c.doc+": "+strings.Join(c.args, " "), func(t *testing.T) {
			out, errOut, code := runCLI(t, c.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if out == "" {
				t.Fatal("printed nothing")
			}
		})
	}
}

// The sample output in the README must be what the command prints.
func TestReadmeSampleOutput(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
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
		t.Fatalf("README sample output is stale:\n%s", lineDiff(sample, got))
	}
}

// A binary built on its own must carry the built-in scenarios: run it from an
// empty directory, with no checkout beside it.
func TestInstalledBinaryNeedsNoCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "retrysim")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
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
