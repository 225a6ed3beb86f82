package playground

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/retrysim/retrysim/compare"
	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/scenarios"
)

func TestCommand(t *testing.T) {
	for _, c := range []struct {
		r    Request
		want string
	}{
		{Request{}, "retrysim compare"},
		{Request{Scenario: "long-outage", Seed: "7", Seeds: 20, Params: []string{"clients=40", "outage=5s"}, Vs: "gated", Format: "json"},
			"retrysim compare --scenario long-outage --seed 7 --seeds 20 --param clients=40 --param outage=5s --vs gated --format json"},
		{Request{YAML: "scenarios: []", Scenario: "it's mine", Seeds: 1, Format: "table"},
			`retrysim compare --file scenario.yaml --scenario 'it'\''s mine'`},
	} {
		if got := c.r.Command(); got != c.want {
			t.Errorf("%+v: got %s, want %s", c.r, got, c.want)
		}
	}
}

// TestRunTwiceSameOutput: the file parsed once serves many runs, and a
// run leaves it as it was (a second run, and one after a parameter was
// set, print the same).
func TestRunTwiceSameOutput(t *testing.T) {
	ctx := context.Background()
	first, err := Run(ctx, Request{Scenario: "overload-burst"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, Request{Scenario: "overload-burst", Params: []string{"clients=3"}}); err != nil {
		t.Fatal(err)
	}
	again, err := Run(ctx, Request{Scenario: "overload-burst"})
	if err != nil {
		t.Fatal(err)
	}
	if again.Output != first.Output || !strings.Contains(first.Output, "|      20 |") {
		t.Fatalf("first run\n%s\nlater run\n%s", first.Output, again.Output)
	}
}

// TestCallErrors: bad input is an answer with an error that says what is
// wrong, never a panic.
func TestCallErrors(t *testing.T) {
	for _, c := range []struct{ method, arg, want string }{
		{"run", `{`, "bad request"},
		{"run", `{"scenario":"nope"}`, "nope"},
		{"run", `{"seed":"x"}`, `seed "x"`},
		{"run", `{"seeds":100001}`, "seeds must be between 1 and 100000"},
		{"run", `{"params":["clients=1:3:1"]}`, "one value per parameter"},
		{"run", `{"params":["clients=0"]}`, "clients must be at least 1"},
		{"run", `{"params":["rate=5"]}`, "not an open loop"},
		{"run", `{"vs":"nobody"}`, `vs "nobody": scenario overload-burst has no such policy (have: immediate, capped-exponential, full-jitter, gated)`},
		{"run", `{"format":"html"}`, `unknown format "html"`},
		{"run", `{"yaml":"scenarios:\n  - nme: x\n"}`, "scenario.yaml:2"},
		{"show", `"nope"`, "nope"},
		{"list", `{"yaml":"::"}`, "scenario.yaml"},
		{"frob", `{}`, "unknown method"},
	} {
		var a struct{ Error string }
		got := Call(context.Background(), c.method, c.arg)
		if err := json.Unmarshal([]byte(got), &a); err != nil || !strings.Contains(a.Error, c.want) {
			t.Errorf("%s %s: got %s, want an error with %q", c.method, c.arg, got, c.want)
		}
	}
}

// TestListControlsFromKinds: a scenario's controls are the sweep
// parameters (kinds.Params) that it has, in the registry's order.
func TestListControlsFromKinds(t *testing.T) {
	cat, err := List(Request{})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := scenarios.Builtin()
	if cat.Default != f.Default || len(cat.Scenarios) != len(f.Scenarios) {
		t.Fatalf("catalogue %+v", cat)
	}
	var order []string
	for _, p := range kinds.Params() {
		order = append(order, p.Name)
	}
	for i, sc := range cat.Scenarios {
		s := f.Scenarios[i]
		var names []string
		for _, c := range sc.Controls {
			names = append(names, c.Name)
		}
		if !slices.IsSortedFunc(names, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) }) {
			t.Errorf("%s: controls %v not in the registry's order", s.Name, names)
		}
		if (s.Name == "overload-burst" && !slices.Contains(names, "clients")) || !slices.Contains(names, "max_attempts") {
			t.Errorf("%s: controls %v", s.Name, names)
		}
		if s.Name == "overload-burst" && slices.Contains(names, "rate") {
			t.Errorf("%s: a burst has no arrival rate, yet controls %v", s.Name, names)
		}
		// A parameter left out is one the scenario does not have.
		for _, p := range kinds.Params() {
			if !slices.Contains(names, p.Name) {
				if _, err := compare.Set(s, []string{p.Name + "=" + p.Format(max(p.Min, 1))}); err == nil {
					t.Errorf("%s: %s can be set, yet it has no control", s.Name, p.Name)
				}
			}
		}
	}
}

func TestSiteServesThePage(t *testing.T) {
	site, err := NewSite([]byte("\x00asm"), []byte("// go"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"app.js", "index.html", EngineFile, WasmExecFile, "worker.js"}
	if got := site.Names(); !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	srv := httptest.NewServer(site)
	defer srv.Close()
	for path, want := range map[string]int{"/": 200, "/worker.js": 200, "/" + EngineFile: 200, "/nope": 404, "/../index.html": 200} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	resp, err := http.Get(srv.URL + "/" + EngineFile)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/wasm" {
		t.Errorf("the engine's content type is %q", ct)
	}
}

var (
	engineOnce sync.Once
	engineDir  string
	engineErr  error
)

// builtEngine compiles the engine for js/wasm once per test binary and
// returns the folder holding it and wasm_exec.js.
func builtEngine(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("compiles the engine for the browser")
	}
	engineOnce.Do(func() {
		engineDir, engineErr = os.MkdirTemp("", "retrysim-engine")
		if engineErr != nil {
			return
		}
		if engineErr = BuildEngine(context.Background(), ".", filepath.Join(engineDir, EngineFile)); engineErr != nil {
			return
		}
		var js []byte
		if js, engineErr = WasmExec(context.Background()); engineErr == nil {
			engineErr = os.WriteFile(filepath.Join(engineDir, WasmExecFile), js, 0o644)
		}
	})
	if engineErr != nil {
		t.Fatal(engineErr)
	}
	return engineDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if engineDir != "" {
		os.RemoveAll(engineDir)
	}
	os.Exit(code)
}

// TestEngineUnderNode: the engine compiled for js/wasm answers as Call
// does natively, for every built-in scenario too (run under Node, which every machine here has; the
// browser test in cmd/retrysim loads it in Chromium).
func TestEngineUnderNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("SKIP: node is not installed, so the js/wasm engine is only compiled, not run")
	}
	dir := builtEngine(t)
	calls := [][2]string{
		{"run", `{}`},
		{"run", `{"scenario":"long-outage","seed":"3","seeds":3,"params":["clients=30"],"format":"json"}`},
		{"run", `{"params":["clients=7"],"plots":true}`},
		{"list", `{}`},
		{"show", `"flaky-server"`},
		{"run", `{"scenario":"nope"}`},
	}
	// Every built-in scenario, a giant with fewer clients.
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Scenarios {
		r := Request{Scenario: s.Name}
		if s.Operations() > 10_000 {
			r.Params = []string{"clients=1000"}
		}
		arg, _ := json.Marshal(r)
		calls = append(calls, [2]string{"run", string(arg)})
	}
	script := `require(process.argv[process.argv.length - 1] + '/wasm_exec.js');
const fs = require('fs');
const calls = JSON.parse(fs.readFileSync(0, 'utf8'));
const go = new Go();
WebAssembly.instantiate(fs.readFileSync(process.argv[process.argv.length - 1] + '/retrysim.wasm'), go.importObject).then((r) => {
  go.run(r.instance);
  fs.writeSync(1, JSON.stringify(calls.map(([m, a]) => globalThis.retrysimCall(m, a))));
  process.exit(0);
});`
	in, _ := json.Marshal(calls)
	cmd := exec.Command(node, "-e", script, "--", dir)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node wrote %.300q…: %v", out, err)
	}
	if len(got) != len(calls) {
		t.Fatalf("node answered %d calls of %d", len(got), len(calls))
	}
	for i, c := range calls {
		if want := Call(context.Background(), c[0], c[1]); got[i] != want {
			t.Errorf("%s %s: the wasm engine answers\n%.400s\nnatively\n%.400s", c[0], c[1], got[i], want)
		}
	}
}

// TestRunProgress: a run reports growing fractions, ending at 1, and the
// same output as without a report.
func TestRunProgress(t *testing.T) {
	r := Request{Scenario: "long-outage", Seeds: 3, Plots: true}
	var got []float64
	ctx := WithProgress(context.Background(), func(f float64) { got = append(got, f) })
	with, err := Run(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	without, err := Run(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if with.Output != without.Output {
		t.Fatal("a progress report changed the output")
	}
	if len(got) < 3 || got[len(got)-1] != 1 || !slices.IsSorted(got) || got[0] <= 0 {
		t.Fatalf("progress %v", got)
	}
}
