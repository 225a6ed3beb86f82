package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
	for _, s := range f.Scenarios {
		yaml, err := scenarios.ShowBuiltin(s.Name)
		if err != nil {
			t.Fatal(err)
		}
		cat, err := playground.List(playground.Request{YAML: string(yaml)})
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		// A giant (huge-burst) runs with fewer clients, to keep the test short.
		var base []string
		if s.Operations() > 10_000 {
			base = []string{"clients=1000"}
		}
		params := base
		for _, c := range cat.Scenarios[0].Controls {
			if c.Name == "max_attempts" {
				params = append(params[:len(params):len(params)], "max_attempts=3")
			}
		}
		for _, r := range []playground.Request{
			{Scenario: s.Name, Params: base},
			{Scenario: s.Name, Seed: "7", Seeds: 3, Format: "json", Params: params},
			{YAML: string(yaml), Seed: "2", Params: params},
		} {
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
