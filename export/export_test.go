package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// load returns the scenario file parsed from yaml.
func load(t *testing.T, yaml string) *scenarios.Scenario {
	t.Helper()
	f, err := scenarios.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return f.Scenarios[0]
}

const world = "scenarios:\n  - name: s\n    server: {phases: [{reject: overloaded}]}\n    clients: {count: 1}\n    policies:\n"

func write(t *testing.T, p *sim.Policy, target string) (string, Result) {
	t.Helper()
	tg, err := LookupTarget(target)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	res, err := Write(&b, p, tg, Source{Scenario: "s"})
	if err != nil {
		t.Fatal(err)
	}
	return b.String(), res
}

// A policy that is its SDK's preset with another attempt count and
// timeout is the SDK's settings alone; one step away from the preset is a
// loop with the SDK's retries off.
func TestSDKSettingsSufficeOnlyForTheSDKsRules(t *testing.T) {
	s := load(t, world+
		"      - {name: a, type: anthropic-sdk-python, max_attempts: 5, attempt_timeout: 30s}\n"+
		"      - {name: b, type: anthropic-sdk-python, max_attempts: 5, base: 1s}\n"+
		"      - {name: c, type: anthropic-sdk-python, server_wait: {clamp_to: 10s}}\n")
	out, res := write(t, &s.Policies[0], "anthropic-python")
	if !res.SDKOnly || !strings.Contains(out, `kwargs.setdefault("max_retries", 4)`) || !strings.Contains(out, `kwargs.setdefault("timeout", 30)`) {
		t.Errorf("the SDK's preset with 5 attempts: SDKOnly %v, want max_retries 4 and timeout 30:\n%s", res.SDKOnly, out)
	}
	if strings.Contains(out, "def with_retries") {
		t.Errorf("SDK settings alone, but a retry loop is printed:\n%s", out)
	}
	// The same rules are not the TypeScript SDK's (its server-wait rule differs).
	if _, res := write(t, &s.Policies[0], "anthropic-typescript"); res.SDKOnly {
		t.Errorf("anthropic-sdk-python's rules carried into the TypeScript SDK's own settings; their server-wait rules differ")
	}
	for i, why := range []string{"", "its backoff", "server waits"} {
		if i == 0 {
			continue
		}
		out, res := write(t, &s.Policies[i], "anthropic-python")
		if res.SDKOnly || !strings.Contains(out, "max_retries\"] = 0") || !strings.Contains(out, why) {
			t.Errorf("policy %d: SDKOnly %v; want the SDK's retries off and the reason %q:\n%s", i, res.SDKOnly, why, out)
		}
	}
}

// What no SDK and no loop here runs is named in the output and returned.
func TestUnexpressedIsSaid(t *testing.T) {
	s := load(t, world+
		"      - {name: full-jitter, base: 1s, cap: 10s, max_attempts: 5, breaker: {open_for: 5s}, gate: true}\n")
	for _, target := range []string{"anthropic-python", "openai-node"} {
		out, res := write(t, &s.Policies[0], target)
		var breaker, shared bool
		for _, u := range res.Unexpressed {
			breaker = breaker || strings.Contains(u, "circuit breaker")
			shared = shared || strings.Contains(u, "other processes")
			if !strings.Contains(out, u) {
				t.Errorf("%s: %q is returned but not in the output", target, u)
			}
		}
		if !breaker || !shared {
			t.Errorf("%s: unexpressed %q; want the breaker and the sharing across processes", target, res.Unexpressed)
		}
	}
	if _, res := write(t, &s.Policies[0], "go"); len(res.Unexpressed) != 0 {
		t.Errorf("go: the policies package runs a breaker and a gate, but unexpressed says %q", res.Unexpressed)
	}
}

// Every policy of every built-in scenario carries into every target: the
// Python compiles (python3 -m py_compile), the Go is gofmt's, and the
// TypeScript type-checks under tsc --strict when clients/export's packages
// are installed (npm ci there; .ci/run does).
func TestEveryBuiltinPolicyExports(t *testing.T) {
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var pyFiles []string
	tsDir := filepath.Join(dir, "src")
	if err := os.Mkdir(tsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	n := 0
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	goFiles := map[string]string{} // a package in an overlay
	for _, s := range f.Scenarios {
		for i := range s.Policies {
			for _, tg := range Targets {
				var b bytes.Buffer
				if _, err := Write(&b, &s.Policies[i], tg, Source{Scenario: s.Name}); err != nil {
					t.Errorf("%s/%s for %s: %v", s.Name, s.Policies[i].Name, tg.Name, err)
					continue
				}
				n++
				name := fmt.Sprintf("p%d", n)
				switch tg.lang {
				case "python":
					p := filepath.Join(dir, name+".py")
					pyFiles = append(pyFiles, p)
					writeFile(t, p, b.Bytes())
				case "typescript":
					writeFile(t, filepath.Join(tsDir, name+".ts"), b.Bytes())
				case "go":
					if formatted, err := format.Source(b.Bytes()); err != nil || !bytes.Equal(formatted, b.Bytes()) {
						t.Errorf("%s/%s for go: not gofmt's (%v):\n%s", s.Name, s.Policies[i].Name, err, b.String())
					}
					if len(goFiles) == 0 { // the Go exports differ only in their strings
						p := filepath.Join(dir, name+".go")
						writeFile(t, p, b.Bytes())
						goFiles[filepath.Join(here, "exportcheck", name, "p.go")] = p
					}
				}
			}
		}
	}
	t.Logf("%d exports", n)
	// The Go compiles, against the module's own anthropic-sdk-go (a
	// package of its own, in an overlay: nothing is written to the tree).
	overlay, err := json.Marshal(map[string]any{"Replace": goFiles})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "overlay.json"), overlay)
	build := []string{"build", "-overlay", filepath.Join(dir, "overlay.json"), "-o", os.DevNull}
	for p := range goFiles {
		build = append(build, "./"+filepath.ToSlash(filepath.Dir(strings.TrimPrefix(p, here+string(filepath.Separator)))))
	}
	if out, err := exec.Command("go", build...).CombinedOutput(); err != nil {
		t.Errorf("go build of every Go export: %v\n%s", err, out)
	}
	if py, err := exec.LookPath("python3"); err != nil {
		t.Log("SKIP the Python syntax check: no python3 on PATH")
	} else if out, err := exec.Command(py, append([]string{"-m", "py_compile"}, pyFiles...)...).CombinedOutput(); err != nil {
		t.Errorf("python3 -m py_compile: %v\n%s", err, out)
	}
	tsc, _ := filepath.Abs("../clients/export/node_modules/.bin/tsc")
	if _, err := os.Stat(tsc); err != nil {
		t.Log("SKIP the TypeScript check: clients/export has no node_modules (run npm ci there)")
		return
	}
	// tsc resolves the SDKs from the tsconfig's folder: compile in a
	// folder of clients/export's own.
	work, err := os.MkdirTemp("../clients/export", "check-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	if err := os.Rename(tsDir, filepath.Join(work, "src")); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile("../clients/export/tsconfig.json")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(work, "tsconfig.json"), cfg)
	if out, err := exec.Command(tsc, "-p", work, "--noEmit").CombinedOutput(); err != nil {
		t.Errorf("tsc --strict over every TypeScript export: %v\n%s", err, out)
	}
}

func writeFile(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Every policy type (backoff or preset) a scenario can name exports to
// every target: a backoff kind added without code in the templates is
// refused here, not carried as another.
func TestEveryPolicyTypeExports(t *testing.T) {
	for _, pt := range kinds.PolicyTypes() {
		s := load(t, world+"      - {name: p, type: "+pt.Name+", max_attempts: 3}\n")
		for _, tg := range Targets {
			var b bytes.Buffer
			if _, err := Write(&b, &s.Policies[0], tg, Source{Scenario: "s"}); err != nil {
				t.Errorf("type %s for %s: %v", pt.Name, tg.Name, err)
			}
		}
	}
}
