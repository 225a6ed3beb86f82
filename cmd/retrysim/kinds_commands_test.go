package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/internal/golden"
	"github.com/retrysim/retrysim/internal/racetest"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// kindCase is a scenario that uses one of the newer kinds, with a sweep
// parameter that applies to it.
type kindCase struct {
	scenario string
	file     string // testdata file, or "" for the built-in scenarios
	param    string // NAME=V1,V2
	// race: small enough to run under the race detector too.
	race bool
}

var kindCases = []kindCase{
	{scenario: "stability-sim-metastable", param: "down_for=2s,5s"},                                    // pool, crash, queue
	{scenario: "pool-cooldown", param: "rate=10,20", race: true},                                       // pool, count cooldown, error-mix
	{scenario: "pool-cooldown-rate", param: "response_time=100ms,500ms"},                               // pool, rate cooldown
	{scenario: "layered-amplification", param: "clients=5,10", race: true},                             // layers
	{scenario: "metastable-codel", param: "concurrency=8,10"},                                          // codel queue
	{scenario: "billed-timeouts", param: "concurrency=4,8"},                                            // billing
	{scenario: "brooker-retry-controls", param: "max_attempts=2,4"},                                    // retry bucket, retry breaker
	{scenario: "mixture-tail", file: "testdata/kinds-mixture.yaml", param: "rate=100,200", race: true}, // mixture service
	{scenario: "mixture-response", file: "testdata/kinds-mixture.yaml", param: "clients=20,50"},        // mixture response time
	{scenario: "metastable-lifo", param: "concurrency=8,10"},                                           // adaptive-LIFO queue
	{scenario: "partial-billing", file: "testdata/kinds-partial-billing.yaml", param: "rate=10,20"},    // billing of partial streams
}

// Every scenario of a newer kind (pool, crash, billing, layers, codel,
// mixture, Brooker's controls) runs in every command: compare (its pool
// members or retry layers table adds up to the attempts, and its JSON
// reads back as check's baseline and in diff), plot and report
// (a pool gets its members figure, nothing else does), sweep (both points
// run, and differ), check (the expectations hold), and compare and plot
// sharded in two and merged, byte for byte as unsharded.
func TestEveryKindEveryCommand(t *testing.T) {
	t.Parallel()
	builtin, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, kc := range kindCases {
		if racetest.Enabled && !kc.race {
			continue // each command runs on one goroutine: the plain run covers the rest
		}
		t.Run(kc.scenario, func(t *testing.T) {
			t.Parallel()
			f := builtin
			sel := []string{"--scenario", kc.scenario}
			if kc.file != "" {
				f, err = scenarios.Load(kc.file)
				if err != nil {
					t.Fatal(err)
				}
				sel = append(sel, "--file", kc.file)
			}
			s, err := f.Lookup(kc.scenario)
			if err != nil {
				t.Fatal(err)
			}
			_, pool := s.Server.(*sim.Pool)
			layered := slices.ContainsFunc(s.Policies, func(p sim.Policy) bool { return len(p.Layers) > 0 })
			cli := func(args ...string) string {
				t.Helper()
				out, errOut, code, _ := runCLI(t, append(args, sel...)...)
				if code != 0 {
					t.Fatalf("%s: exit %d\n%s", strings.Join(args, " "), code, errOut)
				}
				return out
			}
			scratch := t.TempDir()

			t.Run("compare", func(t *testing.T) {
				table := cli("compare")
				if got := strings.Contains(table, "\npool members\n"); got != pool {
					t.Errorf("pool members table %v, want %v:\n%s", got, pool, table)
				}
				if got := strings.Contains(table, "\nretry layers\n"); got != layered {
					t.Errorf("retry layers table %v, want %v:\n%s", got, layered, table)
				}
				base := cli("compare", "--format", "json")
				checkBreakdownSums(t, base, pool, layered)
				// The report reads back: as check's baseline, in diff.
				file := filepath.Join(scratch, "baseline.json")
				if err := os.WriteFile(file, []byte(base), 0o644); err != nil {
					t.Fatal(err)
				}
				if out := cli("check", "--baseline", file); !strings.Contains(out, "PASS") {
					t.Errorf("check --baseline:\n%s", out)
				}
				if _, errOut, code, _ := runCLI(t, "diff", file, file); code != 0 {
					t.Errorf("diff of a report with itself: exit %d\n%s", code, errOut)
				}
			})
			t.Run("plot", func(t *testing.T) {
				dir := filepath.Join(scratch, "plots")
				cli("plot", "--plot-dir", dir, "--seeds", "2", "--plot-format", "svg")
				svg, err := os.ReadFile(filepath.Join(dir, "members.svg"))
				if got := err == nil; got != pool {
					t.Fatalf("members.svg written %v, want %v (%v)", got, pool, err)
				}
				for _, p := range s.Policies {
					if pool && !strings.Contains(string(svg), p.Name+": pool members") {
						t.Errorf("members.svg has no panel %q", p.Name+": pool members")
					}
				}
			})
			t.Run("report", func(t *testing.T) {
				out := filepath.Join(scratch, "review.html")
				cli("report", "--out", out, "--seeds", "2")
				html, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.Contains(string(html), ": pool members"); got != pool {
					t.Errorf("report has a pool members panel: %v, want %v", got, pool)
				}
			})
			t.Run("sweep", func(t *testing.T) {
				var doc struct {
					Points []struct {
						Policies json.RawMessage `json:"policies"`
					} `json:"points"`
				}
				if err := json.Unmarshal([]byte(cli("sweep", "--param", kc.param, "--seeds", "2", "--format", "json")), &doc); err != nil {
					t.Fatal(err)
				}
				if len(doc.Points) != 2 || string(doc.Points[0].Policies) == string(doc.Points[1].Policies) {
					t.Errorf("sweep %s: %d points, the same results at each: the parameter did nothing", kc.param, len(doc.Points))
				}
			})
			t.Run("check", func(t *testing.T) {
				if out := cli("check", "--seeds", "2"); !strings.Contains(out, "PASS") {
					t.Errorf("check:\n%s", out)
				}
			})
			formats := "svg,json"
			if racetest.Enabled {
				formats = "json" // the timelines, members too, without the slow drawing
			}
			for _, args := range [][]string{
				{"compare", "--seeds", "4", "--format", "json"},
				{"plot", "--plot-dir", filepath.Join(scratch, "sharded"), "--seeds", "3", "--plot-format", formats},
			} {
				t.Run("shard "+args[0], func(t *testing.T) {
					args = append(slices.Clone(args), sel...)
					want := runAndCollect(t, filepath.Join(scratch, "sharded"), args...)
					if want.code != 0 {
						t.Fatalf("unsharded: exit %d\n%s", want.code, want.stderr)
					}
					shards := filepath.Join(scratch, "shards-"+args[0])
					for i := range 2 {
						if _, errOut, code, _ := runCLI(t, append(slices.Clone(args), "--shard", fmt.Sprintf("%d/2", i), "--shard-out", shards+"/")...); code != 0 {
							t.Fatalf("shard %d/2: exit %d\n%s", i, code, errOut)
						}
					}
					runAndCollect(t, filepath.Join(scratch, "sharded"), "merge", shards).diff(t, want)
				})
			}
		})
	}
}

// checkBreakdownSums checks a one-seed JSON comparison: with a pool, each
// policy's member requests and the requests the pool answered itself
// (pool.unavailable) add up to its attempts; with layers, the innermost
// layer's attempts are the attempts. Without either there is no such
// field.
func checkBreakdownSums(t *testing.T, out string, pool, layered bool) {
	t.Helper()
	type row struct {
		Policy string           `json:"policy"`
		Name   string           `json:"name"`
		Counts map[string]int64 `json:"counts"`
	}
	var doc struct {
		Results []struct {
			Policy   string `json:"policy"`
			Attempts int64  `json:"attempts"`
			Pool     struct {
				Unavailable int64 `json:"unavailable"`
			} `json:"pool"`
		} `json:"results"`
		PoolMembers []row `json:"pool_members"`
		Layers      []row `json:"layers"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if (doc.PoolMembers != nil) != pool || (doc.Layers != nil) != layered {
		t.Fatalf("pool_members %v, layers %v; want %v, %v", doc.PoolMembers != nil, doc.Layers != nil, pool, layered)
	}
	for _, r := range doc.Results {
		if pool {
			sum := r.Pool.Unavailable
			for _, m := range doc.PoolMembers {
				if m.Policy == r.Policy {
					sum += m.Counts["requests"]
				}
			}
			if sum != r.Attempts {
				t.Errorf("%s: members' requests and unavailable add up to %d, attempts %d", r.Policy, sum, r.Attempts)
			}
		}
		if layered {
			var last *row
			for i := range doc.Layers {
				if doc.Layers[i].Policy == r.Policy {
					last = &doc.Layers[i]
				}
			}
			if last == nil || last.Counts["attempts"] != r.Attempts {
				t.Errorf("%s: innermost layer %+v, attempts %d", r.Policy, last, r.Attempts)
			}
		}
	}
}

// The pool members table docs/output.md shows is what compare prints.
func TestOutputDocPoolMembersSample(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(docsRoot, "docs", "output.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "```text\npool members\n")
	if start < 0 {
		t.Fatal("docs/output.md has no pool members sample")
	}
	start += len("```text\n")
	sample := doc[start : start+strings.Index(doc[start:], "```")]
	out, _, _, _ := runCLI(t, "compare", "--scenario", "pool-cooldown")
	if !strings.HasSuffix(out, "\n"+sample) {
		t.Errorf("docs/output.md's pool members sample is not what compare prints:\n%s", golden.Diff(sample, out))
	}
}
