package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/internal/golden"
)

func TestSweepGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
	}{
		{"sweep-clients.table", []string{"sweep", "--param", "clients=10:30:10"}},
		{"sweep-clients.markdown", []string{"sweep", "--param", "clients=10:30:10", "--format", "markdown"}},
		{"sweep-capacity-outage-seeds3.csv", []string{"sweep", "--param", "capacity=3:6:3", "--param", "outage=0s:2s:2s", "--seeds", "3", "--format", "csv"}},
		{"sweep-base-seeds3.json", []string{"sweep", "-p", "base=250ms:500ms:250ms", "--seeds", "3", "--format", "json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, _, err := runCLI(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tt.name, out, errOut)
		})
	}
}

func TestSweepSameOnAnyGOMAXPROCS(t *testing.T) {
	prev := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prev)
	var outs []string
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		out, _, _, err := runCLI(t, "sweep", "--param", "clients=20:40:20", "--seeds", "4", "--format", "json")
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	if outs[0] != outs[1] {
		t.Fatalf("sweep output differs between GOMAXPROCS 1 and 2:\n%s", golden.Diff(outs[0], outs[1]))
	}
}

func TestCommandUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"sweep"}, "sweep needs --param"},
		{[]string{"sweep", "--param", "speed=1:2:1"}, "--param \"speed=1:2:1\": unknown parameter"},
		{[]string{"sweep", "--param", "clients=1:2:1", "--param", "clients=3:4:1"}, "clients is given twice"},
		{[]string{"sweep", "-p", "clients=1", "-p", "base=1s", "-p", "delay=1s"}, "at most 2 parameters"},
		{[]string{"sweep", "--param", "outage=1s", "--scenario", "rate-limited-burst"}, "the server has one phase"},
		{[]string{"sweep", "--param", "clients=1:2:1", "--format", "html"}, "unknown format \"html\""},
		{[]string{"sweep", "--param", "clients=1:2:1", "--plot-dir", "x", "--plot-format", "gif"}, "--plot-format: unknown format \"gif\" (want one or more of png, svg, e.g."},
		{[]string{"sweep", "-p", "clients=1:1000:1", "-p", "capacity=1:1000:1"}, "at most 10000"},
		{[]string{"plot"}, "plot needs --plot-dir DIR"},
		{[]string{"plot", "--out", "x", "--format", "pdf"}, "--format: unknown format \"pdf\" (want one or more of png, svg, json, csv,"},
		{[]string{"plot", "--plot-dir", "x", "--plot-format", "pdf"}, "--plot-format: unknown format \"pdf\" (want one or more of png, svg, json, csv,"},
		{[]string{"plot", "--plot-dir", "x", "--bucket", "1us"}, "--bucket must be at least 1ms"},
		{[]string{"plot", "--plot-dir", "x", "--seeds", "0"}, "--seeds must be between 1"},
		{[]string{"plot", "--plot-dir", "x", "--scenario", "nope"}, "no scenario \"nope\""},
		{[]string{"report"}, "report needs --out FILE.html"},
		{[]string{"report", "--out", "-", "extra"}, "report takes no arguments"},
	}
	for _, tt := range tests {
		_, _, _, err := runCLI(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want one containing %q", tt.args, err, tt.want)
			continue
		}
		if !errors.As(err, new(usageError)) {
			t.Errorf("%v: error %v is not a usage error (exit 2)", tt.args, err)
		}
	}
}

func TestPlotWritesFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// PNG rendering is slow under -race; report's tests decode PNGs.
	_, out, _, err := runCLI(t, "plot", "--plot-dir", dir, "--seeds", "3", "--plot-format", "svg")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, name := range []string{"timeline", "load", "cdf", "outcomes", "distributions"} {
		for _, ext := range []string{"svg"} {
			want = append(want, name+"."+ext)
			if !strings.Contains(out, filepath.Join(dir, name+"."+ext)) {
				t.Errorf("stderr does not list %s.%s:\n%s", name, ext, out)
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "cdf.svg"))
	if err != nil || !bytes.HasPrefix(svg, []byte("<?xml")) {
		t.Errorf("cdf.svg is not an SVG (%v)", err)
	}
}

// --plot-format json,csv writes the timelines' numbers and no image; the
// files are golden (their schema is documented in docs/output.md), and
// their totals agree with the run's.
func TestPlotWritesTimelineData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, out, _, err := runCLI(t, "plot", "--plot-dir", dir, "--plot-format", "json,csv")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if want := []string{"timeline.csv", "timeline.json"}; !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
	for _, name := range []string{"timeline.json", "timeline.csv"} {
		if !strings.Contains(out, filepath.Join(dir, name)) {
			t.Errorf("stderr does not list %s:\n%s", name, out)
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "plot-overload-burst-"+name, b)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "timeline.json"))
	var doc struct {
		Schema    string
		Timelines []struct {
			Policy        string
			FirstAttempts []int `json:"first_attempts"`
			Retries       []int
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.Schema != "retrysim/timeline/v1" || len(doc.Timelines) != 4 {
		t.Fatalf("timeline.json: schema %q, %d timelines, %v", doc.Schema, len(doc.Timelines), err)
	}
	// overload-burst's gated sends 32 attempts, 20 of them first attempts.
	if g := doc.Timelines[3]; g.Policy != "gated" || sum(g.FirstAttempts) != 20 || sum(g.Retries) != 12 {
		t.Errorf("%s: %d first attempts, %d retries; want gated with 20 and 12", g.Policy, sum(g.FirstAttempts), sum(g.Retries))
	}
}

func sum(s []int) int {
	n := 0
	for _, v := range s {
		n += v
	}
	return n
}

func TestSweepPlot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, _, _, err := runCLI(t, "sweep", "--param", "clients=10:20:10", "--param", "capacity=3:6:3", "--plot-dir", dir, "--plot-format", "svg"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"completed", "attempts", "gave_up", "amplification", "latency_ms-p99", "last_completion_ms"} {
		if _, err := os.Stat(filepath.Join(dir, "sweep-"+name+".svg")); err != nil {
			t.Error(err)
		}
	}
}

// The HTML report is one file that needs nothing else: no scripts, no
// links to fetch, the plots inline; and the same inputs give the same bytes.
func TestHTMLReport(t *testing.T) {
	t.Parallel()
	page, _, _, err := runCLI(t, "report", "--out", "-", "--seeds", "3")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", "<title>retrysim: overload-burst</title>", "20 clients burst",
		"completed (higher is better)", "vs capped-exponential",
		"Warning: seeds 1–3: no comparison can be significant", "<svg class=\"plot\"", "completion-time CDF",
		"offered load per 1s against capacity", "first attempts (bottom)", "goodput: operations completed",
		"retrysim report --scenario overload-burst --seed 1 --seeds 3 --out FILE.html"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(page, "<svg "); n != 5 {
		t.Errorf("report has %d plots, want 5 (timeline, load, cdf, outcomes, distributions)", n)
	}
	for _, bad := range []string{"<script", "<link", "src=", "<?xml", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("report contains %q: it must be self-contained", bad)
		}
	}
	again, _, _, err := runCLI(t, "compare", "--format", "html", "--seeds", "3")
	if err != nil {
		t.Fatal(err)
	}
	// Only the command shown differs.
	again = strings.Replace(again, "retrysim compare --scenario overload-burst --seed 1 --seeds 3 --format html",
		"retrysim report --scenario overload-burst --seed 1 --seeds 3 --out FILE.html", 1)
	if again != page {
		t.Errorf("compare --format html differs from report:\n%s", golden.Diff(page, again))
	}
	one, _, _, err := runCLI(t, "report", "--out", "-")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(one, "Results, seed 1") || strings.Count(one, "<svg ") != 4 {
		t.Error("one-seed report lacks its results table or has the wrong number of plots")
	}
	// A handout: the trade first, effective settings, what made it, how to
	// read each figure.
	for _, want := range []string{"The trade, per policy", "attempt timeout", "none (waits for the answer)", "honoured, uncapped",
		"by retrysim devel, commit ", "Hollow bars: the policy completes under 95%", "read the height it ends at"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if i, j := strings.Index(page, "The trade, per policy"), strings.Index(page, "completed (higher is better)"); i > j {
		t.Error("the trade summary is not the first result")
	}
	if strings.Contains(page, "incident") {
		t.Error("a report of a scenario without an incident mentions one")
	}
	meta, _, _, err := runCLI(t, "report", "--out", "-", "--scenario", "metastable-retry-storm")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"incident from 20s to 30s", "recovered", "recover_ms"} {
		if !strings.Contains(meta, want) {
			t.Errorf("metastable report lacks %q", want)
		}
	}
}
