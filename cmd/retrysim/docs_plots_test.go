package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/internal/golden"

	"github.com/retrysim/retrysim/internal/racetest"
)

// docsRoot is the repository root, seen from this package's directory.
const docsRoot = "../.."

// TestDocsPlots runs the commands shown in docs/plots.md in a scratch
// directory and checks that docs/img holds exactly what they make, and that
// every image the page shows exists. With -update it copies the new images
// into docs/img.
func TestDocsPlots(t *testing.T) {
	t.Parallel()
	if racetest.Enabled {
		t.Skip("renders every figure of docs/plots.md on one goroutine; the plain go test runs this")
	}
	cmds := docCommands(t, "docs/plots.md")
	if len(cmds) == 0 {
		t.Fatal("docs/plots.md shows no commands")
	}
	root, err := filepath.Abs(docsRoot)
	if err != nil {
		t.Fatal(err)
	}
	// The commands write under docs/img: here, under a scratch directory.
	scratch := t.TempDir()
	for _, args := range cmds {
		args = slices.Clone(args[1:])
		for i := range args[:len(args)-1] {
			if args[i] == "--out" || args[i] == "--plot" || args[i] == "--plot-dir" {
				args[i+1] = filepath.Join(scratch, args[i+1])
			}
			if args[i] == "--file" { // the page's paths are from the repository's root
				args[i+1] = filepath.Join(root, args[i+1])
			}
		}
		if _, _, _, err := runCLI(t, args...); err != nil {
			t.Fatalf("%s: %v", strings.Join(args, " "), err)
		}
	}
	made := map[string]bool{}
	err = filepath.WalkDir(filepath.Join(scratch, "docs", "img"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(scratch, path)
		made[rel] = true
		got, _ := os.ReadFile(path)
		dst := filepath.Join(root, rel)
		if golden.Updating() {
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			return os.WriteFile(dst, got, 0o644)
		}
		want, err := os.ReadFile(dst)
		if err != nil {
			t.Errorf("%s: %v (run the commands in docs/plots.md)", rel, err)
			return nil
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what docs/plots.md's commands make (run them again):\n%s", rel, golden.Diff(string(want), string(got)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(root, "docs", "plots.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\]\((img/[^)]+)\)`).FindAllStringSubmatch(string(page), -1) {
		if !made[filepath.Join("docs", m[1])] {
			t.Errorf("docs/plots.md shows %s, which its commands do not make", m[1])
		}
	}
}
