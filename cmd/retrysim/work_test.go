package main

import (
	"context"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/runs"
)

// Work that is clearly absurd is refused with exit 2 and a message naming
// --force, before anything runs.
func TestAbsurdWorkRefused(t *testing.T) {
	t.Parallel()
	year := writeFile(t, "year.yaml", `scenarios:
  - name: year
    server: {phases: [{duration: 1000h}, {admit: 1, window: 1s}]}
    clients: {count: 50000000, deadline: 1000h}
    policies: [{name: full-jitter}]
`)
	for _, args := range [][]string{
		{"compare", "--file", year},
		{"compare", "--scenario", "huge-burst", "--seeds", "100000"},
		{"check", "--scenario", "long-outage", "--seeds", "100000"},
		{"plot", "--out", t.TempDir(), "--scenario", "huge-burst", "--seeds", "5000"},
		{"report", "--out", "-", "--scenario", "huge-burst", "--seeds", "5000"},
		{"sweep", "-p", "clients=1:100:1", "-p", "capacity=1:100:1", "--seeds", "100000"},
	} {
		out, errOut, code, _ := runCLI(t, args...)
		if code != exitUsage || !strings.Contains(errOut, "refusing to start: up to ") || !strings.Contains(errOut, "pass --force") || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and a refusal", args, code, out, errOut)
		}
	}
}

// A long run starts with a warning on stderr; --force starts what would be
// refused, with the same warning. (The context is cancelled beforehand, so
// the runs stop at once: exit 130.)
func TestLongWorkWarns(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, args := range [][]string{
		{"compare", "--scenario", "long-outage", "--seeds", "20000"},
		{"compare", "--scenario", "huge-burst", "--seeds", "100000", "--force"},
	} {
		_, errOut, code, _ := runCLIContext(t, ctx, args...)
		if code != exitInterrupted || !strings.HasPrefix(errOut, "retrysim: warning: this is a long run: up to ") {
			t.Errorf("%v: exit %d, stderr %q; want a warning, then exit 130", args, code, errOut)
		}
	}
}

// --verbose prints the work estimate before the run, with the events a
// pilot run predicts (long-outage is small: the pilot runs it whole, so it
// predicts the events the run then reports); the long-run warning gives the
// prediction too.
func TestWorkEstimatePredicts(t *testing.T) {
	t.Parallel()
	_, errOut, code, _ := runCLI(t, "compare", "--scenario", "long-outage", "--verbose")
	if code != 0 || !strings.HasPrefix(errOut, "retrysim: work estimate: up to 1.7e+06 engine events in 5 runs, 16598 predicted by a pilot run, ~") ||
		!strings.Contains(errOut, "total: 16598 events in ") {
		t.Errorf("compare --verbose: exit %d, stderr %q", code, errOut)
	}
	var stderr strings.Builder
	c := &call{flags: flagValues{}, stderr: &stderr}
	plan := runs.Plan{Groups: []runs.Group{{Scenario: scenariotest.Builtin(t, "huge-burst"), Seeds: 100}}}
	if err := checkWork(t.Context(), c, plan); err != nil || !strings.HasPrefix(stderr.String(),
		"retrysim: warning: this is a long run: up to 3.1e+09 engine events in 100 runs, 1.4e+09 predicted by a pilot run at 1/100 scale, ~") {
		t.Errorf("huge-burst × 100 seeds: %v, stderr %q", err, stderr.String())
	}
}
