package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/playground"
	"github.com/retrysim/retrysim/scenarios"
)

// TestPlaygroundOutputIsCompare: what the page shows for a request (the
// function the WebAssembly build calls) is byte for byte what the command
// of "copy as command" prints, for every built-in scenario: as built in and
// as the YAML of "copy as YAML", on one seed and on several, with a sweep
// parameter set.
func TestPlaygroundOutputIsCompare(t *testing.T) {
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	switched := 0 // scenarios with the shared throttle's switch
	for _, s := range f.Scenarios {
		yaml, err := scenarios.ShowBuiltin(s.Name)
		if err != nil {
			t.Fatal(err)
		}
		cat, err := playground.List(playground.Request{YAML: string(yaml)})
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		// A giant (huge-burst) runs with fewer clients, to keep the test
		// short; an open loop (codel-overload) has no clients to cut.
		var base []string
		if s.Operations() > 10_000 && slices.ContainsFunc(cat.Scenarios[0].Controls, func(c playground.Control) bool { return c.Name == "clients" }) {
			base = []string{"clients=1000"}
		}
		params := base
		requests := []playground.Request{{Scenario: s.Name, Params: base}}
		for _, c := range cat.Scenarios[0].Controls {
			switch c.Name {
			case "max_attempts":
				params = append(params[:len(params):len(params)], "max_attempts=3")
			case "shared_throttle": // the switch: off here, on below
				switched++
				requests = append(requests, playground.Request{Scenario: s.Name, Params: append(base[:len(base):len(base)], "shared_throttle=0")})
				params = append(params[:len(params):len(params)], "shared_throttle=1")
			}
		}
		for _, r := range append(requests,
			playground.Request{Scenario: s.Name, Seed: "7", Seeds: 3, Format: "json", Params: params},
			playground.Request{YAML: string(yaml), Seed: "2", Params: params},
		) {
			args := r.Args()
			if r.YAML != "" {
				path := filepath.Join(dir, s.Name+".yaml")
				if err := os.WriteFile(path, yaml, 0o644); err != nil {
					t.Fatal(err)
				}
				for i := range args {
					if args[i] == playground.FileName {
						args[i] = path
					}
				}
			}
			want, _, code, err := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("%s: %v", r.Command(), err)
			}
			// The JSON's origin names the page as the retrysim that wrote it.
			want = strings.Replace(want, `"retrysim_version": "`+readBuildVersion().short()+`"`, `"retrysim_version": "`+playground.Version+`"`, 1)
			got, err := playground.Run(context.Background(), r)
			if err != nil {
				t.Fatalf("%s: playground: %v", r.Command(), err)
			}
			if got.Output != want {
				t.Errorf("%s: the playground shows\n%s\nthe command prints\n%s", r.Command(), got.Output, want)
			}
			if got.Command != r.Command() || !strings.HasPrefix(got.Command, "retrysim compare") {
				t.Errorf("command %q, want %q", got.Command, r.Command())
			}
		}
	}
	if switched == 0 {
		t.Error("no built-in scenario has the shared_throttle switch")
	}
}

// TestShowIsPlaygroundYAML: the page's "copy as YAML" of a built-in
// scenario is what 'retrysim show' prints.
func TestShowIsPlaygroundYAML(t *testing.T) {
	want, _, code, err := runCLI(t, "show", "long-outage")
	if code != 0 {
		t.Fatal(err)
	}
	var got struct{ YAML string }
	if err := json.Unmarshal([]byte(playground.Call(context.Background(), "show", `"long-outage"`)), &got); err != nil {
		t.Fatal(err)
	}
	if got.YAML != want {
		t.Fatalf("the playground's YAML\n%s\n'retrysim show' prints\n%s", got.YAML, want)
	}
}

// TestCompareParam: compare --param NAME=VALUE runs the scenario with one
// sweep parameter set, as the same value in the file would; bad values are
// usage errors that name the flag.
func TestCompareParam(t *testing.T) {
	yaml, err := scenarios.ShowBuiltin("overload-burst")
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(yaml), "count: 20", "count: 7", 1)
	if edited == string(yaml) {
		t.Fatal("overload-burst has no 'count: 20' to edit")
	}
	path := filepath.Join(t.TempDir(), "seven.yaml")
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	want, _, code, err := runCLI(t, "compare", "--file", path)
	if code != 0 {
		t.Fatal(err)
	}
	got, _, code, err := runCLI(t, "compare", "--param", "clients=7")
	if code != 0 {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("--param clients=7 prints\n%s\nthe file with 7 clients\n%s", got, want)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--param", "clients=1:3:1"}, `--param "clients=1:3:1": compare takes one value`},
		{[]string{"--param", "bogus=1"}, `unknown parameter "bogus"`},
		{[]string{"--param", "clients=7", "--param", "clients=8"}, "--param clients is given twice"},
		{[]string{"--param", "rate=5"}, "--param rate=5: the workload has no arrival rate"},
		{[]string{"--param", "clients=0"}, "clients must be at least 1"},
	} {
		_, stderr, code, _ := runCLI(t, append([]string{"compare"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// TestPlaygroundPlotsArePlotFiles: the page's figures are the SVG files
// that its "plot command" writes, byte for byte, on one seed and on
// several (which adds the distributions).
func TestPlaygroundPlotsArePlotFiles(t *testing.T) {
	for _, r := range []playground.Request{
		{Scenario: "overload-burst", Params: []string{"clients=7"}, Plots: true},
		{Scenario: "long-outage", Seed: "4", Seeds: 3, Params: []string{"clients=40"}, Plots: true},
	} {
		got, err := playground.Run(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"timeline", "load", "cdf", "outcomes"}
		if r.Seeds > 1 {
			want = append(want, "distributions")
		}
		if len(got.Figures) != len(want) {
			t.Fatalf("%s: %d figures, want %v", r.PlotCommand(), len(got.Figures), want)
		}
		dir := t.TempDir()
		args := r.PlotArgs()
		for i := range args {
			if args[i] == playground.PlotDir {
				args[i] = dir
			}
		}
		if _, stderr, code, err := runCLI(t, args...); code != 0 {
			t.Fatalf("%s: %v\n%s", r.PlotCommand(), err, stderr)
		}
		for i, f := range got.Figures {
			file, err := os.ReadFile(filepath.Join(dir, want[i]+".svg"))
			if err != nil {
				t.Fatal(err)
			}
			if f.Name != want[i] || f.SVG != string(file) {
				t.Errorf("%s: figure %d (%s) is not %s.svg (%d bytes, file %d)", r.PlotCommand(), i, f.Name, want[i], len(f.SVG), len(file))
			}
		}
		if got.PlotCommand != r.PlotCommand() || !strings.HasPrefix(got.PlotCommand, "retrysim plot --plot-dir plots --plot-format svg --scenario ") {
			t.Errorf("plot command %q", got.PlotCommand)
		}
	}
}

// TestReportLinksToPlayground: report --playground URL links the page to
// the playground with its scenario, seeds and file preloaded
// (playground.Link; TestPlaygroundInChromium loads such a link).
func TestReportLinksToPlayground(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.html")
	if _, stderr, code, err := runCLI(t, "report", "--out", out, "--scenario", "long-outage", "--seed", "3", "--playground", "http://127.0.0.1:8026/"); code != 0 {
		t.Fatalf("%v\n%s", err, stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := `<a href="http://127.0.0.1:8026/#s=long-outage&amp;seed=3">Open this scenario in the playground</a>`; !strings.Contains(string(page), want) {
		t.Errorf("the report has no %s", want)
	}
	yaml, err := os.ReadFile(filepath.Join(docsRoot, "docs", "examples", "custom.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "custom.yaml")
	if err := os.WriteFile(file, yaml, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code, err := runCLI(t, "report", "--out", out, "--file", file, "--seeds", "2", "--vs", "gated", "--playground", "https://example.org/pg/"); code != 0 {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if page, err = os.ReadFile(out); err != nil {
		t.Fatal(err)
	}
	f, err := scenarios.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	link := playground.Link("https://example.org/pg/", playground.Request{YAML: string(yaml), Scenario: f.Default, Seed: "1", Seeds: 2, Vs: "gated"})
	if want := `<a href="` + strings.ReplaceAll(link, "&", "&amp;") + `">`; !strings.Contains(string(page), want) {
		t.Errorf("the report has no %.120s…", want)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--playground", "http://x/#s=a"}, "without a #fragment"},
		{[]string{"--playground", "http://x/", "--file", "-"}, "needs --file PATH"},
		{[]string{"--playground", "http://x/", "--all"}, "does not work with --all"},
	} {
		_, stderr, code, _ := runCLI(t, append([]string{"report", "--out", out}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// TestPlaygroundServes: 'retrysim playground' prints its URL, serves the
// page and the engine given with --wasm, and stops cleanly when
// interrupted; bad flags are usage errors.
func TestPlaygroundServes(t *testing.T) {
	engine := filepath.Join(t.TempDir(), "engine.wasm")
	if err := os.WriteFile(engine, []byte("\x00asm not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"retrysim", "playground", "--addr", "127.0.0.1:0", "--wasm", engine}, pw, &stderr)
		pw.Close()
	}()
	url, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL: %v (%v)", err, <-done)
	}
	go io.Copy(io.Discard, pr)
	url = strings.TrimSpace(url)
	for path, want := range map[string]string{"": "<title>retrysim playground</title>", playground.EngineFile: "not really", "worker.js": "retrysimCall"} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s%s: %d, want %q in %.80q", url, path, resp.StatusCode, want, body)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("interrupted playground: %v", err)
	}

	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, nil, 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--wasm", "/nonexistent/e.wasm", "--out", t.TempDir()}, "--wasm /nonexistent/e.wasm"},
		{[]string{"--wasm", engine, "--out", notDir}, "--out " + notDir},
		{[]string{"--wasm", engine, "--addr", "nonsense"}, "--addr nonsense"},
		{[]string{"extra"}, "playground takes no arguments"},
	} {
		_, stderr, code, _ := runCLI(t, append([]string{"playground"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
