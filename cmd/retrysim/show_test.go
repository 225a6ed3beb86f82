package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	retrysim "github.com/retrysim/retrysim"
	"github.com/retrysim/retrysim/scenarios"
)

// 'retrysim show NAME' prints the scenario's entry of scenarios.yaml byte
// for byte (comments too) under a header; the output loads with --file and
// compares exactly as the built-in does.
func TestShowPrintsBuiltinEntry(t *testing.T) {
	t.Parallel()
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, s := range f.Scenarios {
		out, errOut, code, _ := runCLI(t, "show", s.Name)
		if code != 0 {
			t.Errorf("show %s: exit %d, %s", s.Name, code, errOut)
			continue
		}
		_, entry, ok := strings.Cut(out, "\nscenarios:\n")
		if !ok || !strings.HasPrefix(entry, "  - name: "+s.Name+"\n") || !bytes.Contains(retrysim.BuiltinScenarios, []byte(entry)) {
			t.Errorf("show %s is not its entry of scenarios.yaml:\n%s", s.Name, out)
			continue
		}
		if strings.Count(entry, "\n  - name: ") != 0 {
			t.Errorf("show %s holds another scenario too:\n%s", s.Name, out)
		}
		path := filepath.Join(dir, s.Name+".yaml")
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		loaded, err := scenarios.Load(path)
		if err != nil || len(loaded.Scenarios) != 1 || loaded.Default != s.Name {
			t.Errorf("show %s does not load as that one scenario: %v", s.Name, err)
			continue
		}
		if s.Operations() >= bigClients {
			continue // huge-burst runs once in the whole suite
		}
		builtin, _, _, err1 := runCLI(t, "compare", "--scenario", s.Name)
		shown, _, _, err2 := runCLI(t, "compare", "--file", path)
		if err1 != nil || err2 != nil || builtin == "" || builtin != shown {
			t.Errorf("compare of show %s differs from the built-in (%v, %v):\n%s\n%s", s.Name, err1, err2, builtin, shown)
		}
	}
	// The comments come along.
	out, _, _, _ := runCLI(t, "show", "overload-burst")
	if !strings.Contains(out, "- duration: 2s           # outage: every request gets 529\n") {
		t.Errorf("show overload-burst lost its comments:\n%s", out)
	}
	for _, args := range [][]string{{"show"}, {"show", "nope"}, {"show", "overload-burst", "long-outage"}} {
		out, errOut, code, _ := runCLI(t, args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "overload-burst") && !strings.Contains(errOut, "retrysim list") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want a usage error", args, code, out, errOut)
		}
	}
}
