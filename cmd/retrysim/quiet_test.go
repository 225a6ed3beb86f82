package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// --quiet (-q), before or after the command, hides everything on stderr but
// errors: the wrote lines, warnings, the long-run warning and progress bars.
// Stdout is the same with or without it.
func TestQuietHidesAllButErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := burstFile(t, "500ms", `"completed >= 18"`)
	for _, args := range [][]string{
		{"-q", "plot", "--plot-dir", filepath.Join(dir, "a"), "--plot-format", "svg"},
		{"plot", "--quiet", "--plot-dir", filepath.Join(dir, "b"), "--plot-format", "svg,json"},
		{"--quiet", "sweep", "--param", "clients=10:20:10", "--plot-dir", filepath.Join(dir, "c"), "--plot-format", "svg"},
		{"report", "-q", "--out", filepath.Join(dir, "r.html")},
		{"check", "--file", good, "--junit", filepath.Join(dir, "check.xml"), "-q"},
		{"-q", "compare", "--seeds", "3"}, // warns that no comparison can be significant
		{"-q", "compare", "--verbose"},    // --quiet wins
	} {
		loud, loudErr, code, err := runCLI(t, withoutQuiet(args)...)
		if err != nil || loudErr == "" {
			t.Fatalf("%v without --quiet: exit %d, %v, stderr %q: want messages to hide", args, code, err, loudErr)
		}
		out, errOut, code, err := runCLI(t, args...)
		if err != nil || errOut != "" || out != loud {
			t.Errorf("%v: exit %d, %v, stderr %q; want exit 0, nothing on stderr and stdout as without --quiet", args, code, err, errOut)
		}
	}

	// The long-run warning goes; the error (here, Ctrl-C) stays.
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	_, errOut, code, _ := runCLIContext(t, cancelled, "-q", "compare", "--scenario", "long-outage", "--seeds", "20000")
	if code != exitInterrupted || errOut != "retrysim: interrupted\n" {
		t.Errorf("-q with a long run, interrupted: exit %d, stderr %q; want only the interruption", code, errOut)
	}

	// No bar on a terminal.
	var stdout bytes.Buffer
	var term fakeTerminal
	if err := run(context.Background(), []string{"retrysim", "-q", "check", "--file", typoScenario(t)}, &stdout, &term); err != nil {
		t.Fatal(err)
	}
	if term.Len() != 0 {
		t.Errorf("-q on a terminal drew %q", term.String())
	}

	// Errors always show, with their exit status.
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-q", "compare", "--scenario", "nope"}, exitUsage, `no scenario "nope"`},
		{[]string{"plot", "-q", "--plot-dir", "-"}, exitUsage, "--plot-dir -: images cannot go to stdout"},
		{[]string{"check", "-q", "--file", burstFile(t, "500ms", `"completed >= 19"`)}, exitFail, "check failed: 1 expectation(s) failed"},
		{[]string{"-q", "compare", "--bogus"}, exitUsage, "bogus"},
	} {
		_, errOut, code, _ := runCLI(t, tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tt.args, code, errOut, tt.code, tt.want)
		}
	}
}

// withoutQuiet is args without -q and --quiet.
func withoutQuiet(args []string) []string {
	var out []string
	for _, a := range args {
		if a != "-q" && a != "--quiet" {
			out = append(out, a)
		}
	}
	return out
}
