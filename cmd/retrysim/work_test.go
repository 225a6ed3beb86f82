package main

import (
	"context"
	"strings"
	"testing"
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
