package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withStdin makes the next commands read input from os.Stdin (the CLI's
// default reader).
func withStdin(t *testing.T, input string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stdin")
	if err := os.WriteFile(path, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdin
	os.Stdin = f
	t.Cleanup(func() { os.Stdin = old; f.Close() })
}

func TestFileFromStdin(t *testing.T) {
	custom, err := os.ReadFile(filepath.Join(docsRoot, "docs", "examples", "custom.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	withStdin(t, string(custom))
	out, _, _, err := runCLI(t, "list", "--file", "-")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Scenarios in <stdin>:") || !strings.Contains(out, "brownout") {
		t.Errorf("list --file - did not list stdin's scenarios:\n%s", out)
	}

	withStdin(t, "scenarios:\n  - name: x\n    bogus: 1\n")
	_, _, _, err = runCLI(t, "compare", "--file", "-")
	if err == nil || !strings.Contains(err.Error(), "<stdin>") || !errors.As(err, new(usageError)) {
		t.Errorf("a bad scenario on stdin: error %v, want a usage error naming <stdin>", err)
	}
}

func TestBaselineFromStdin(t *testing.T) {
	baseline, _, _, err := runCLI(t, "compare", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	withStdin(t, baseline)
	out, _, _, err := runCLI(t, "check", "--baseline", "-", "--scenario", "rate-limited-burst")
	if err != nil {
		t.Fatalf("check --baseline - with compare's own JSON: %v\n%s", err, out)
	}
	if !strings.Contains(out, "76 of 76 baseline metrics unchanged") {
		t.Errorf("the baseline from stdin was not compared:\n%s", out)
	}
	withStdin(t, "{}")
	_, _, _, err = runCLI(t, "check", "--baseline", "-")
	if err == nil || !strings.Contains(err.Error(), "<stdin>") {
		t.Errorf("a bad baseline on stdin: error %v, want one naming <stdin>", err)
	}
	for _, args := range [][]string{
		{"check", "--file", "-", "--baseline", "-"},
		{"check", "--baseline", "-", "--baseline", "-"},
	} {
		_, _, _, err := runCLI(t, args...)
		if err == nil || !strings.Contains(err.Error(), "standard input") || !errors.As(err, new(usageError)) {
			t.Errorf("%v: error %v, want a usage error: stdin is read once", args, err)
		}
	}
}

// A bad output path fails before any simulation runs: the error names the
// flag as given (old names included), nothing is written (sweep prints no
// results), and '-' is refused where a directory is wanted.
func TestBadOutputPathFailsFast(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("blocker", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"plot", "--out", "blocker/plots", "--format", "svg"}, "--out"},
		{[]string{"plot", "--out", "-"}, "--out -"},
		{[]string{"sweep", "--param", "clients=10:20:10", "--format", "json", "--plot", "blocker/plots"}, "--plot"},
		{[]string{"sweep", "--param", "clients=10:20:10", "--plot", "-"}, "--plot -"},
		{[]string{"plot", "--plot-dir", "blocker/plots", "--plot-format", "svg"}, "--plot-dir blocker/plots: not a directory"},
		{[]string{"sweep", "--param", "clients=10:20:10", "--format", "csv", "--plot-dir", "-"}, "--plot-dir -"},
		{[]string{"report", "--out", "blocker/report.html"}, "--out blocker/report.html: cannot create it: not a directory"},
		{[]string{"report", "--out", "."}, "--out"},
	} {
		stdout, stderr, _, err := runCLI(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, new(usageError)) {
			t.Errorf("%v: error %v, want a usage error mentioning %q", tt.args, err, tt.want)
		}
		if stdout != "" || strings.Contains(stderr, "wrote") {
			t.Errorf("%v: wrote something before failing:\nstdout %q\nstderr %q", tt.args, stdout, stderr)
		}
	}
	entries, _ := os.ReadDir(".")
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files left behind: %v, want only blocker", names)
	}
}
