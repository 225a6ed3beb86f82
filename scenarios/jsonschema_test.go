package scenarios

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	retrysim "github.com/retrysim/retrysim"
)

// compiledSchema compiles JSONSchema with a real JSON Schema validator.
func compiledSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	out, err := JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaURL, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(SchemaURL)
	if err != nil {
		t.Fatalf("the schema does not compile: %v", err)
	}
	return sch
}

// asJSON reads YAML as the JSON value an editor's validator sees.
func asJSON(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

// The schema takes every scenario file the project ships: the built-in
// scenarios, every file under docs/examples, the big ones in docs/ and
// those .ci/run loads.
func TestSchemaTakesEveryShippedScenario(t *testing.T) {
	sch := compiledSchema(t)
	files := map[string][]byte{BuiltinFile: retrysim.BuiltinScenarios}
	paths, _ := filepath.Glob("../docs/examples/*.yaml")
	more, _ := filepath.Glob("../docs/*.yaml")
	ci, _ := filepath.Glob("../.ci/*.yaml")
	more = append(more, ci...)
	paths = append(paths, more...)
	if len(paths) < 4 {
		t.Fatalf("found %d files under docs/", len(paths))
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = data
	}
	for name, data := range files {
		if _, err := ParseIn(name, data, filepath.Dir(name)); err != nil {
			t.Errorf("%s: the loader refuses it: %v", name, err)
			continue
		}
		if err := sch.Validate(asJSON(t, data)); err != nil {
			t.Errorf("%s: the schema refuses it: %v", name, err)
		}
	}
}

// Files the loader refuses for their structure, the schema refuses too:
// an unknown field at each level, a wrong type, a negative duration, a
// probability above 1, an unknown kind.
func TestSchemaAndLoaderRefuseTheSameFiles(t *testing.T) {
	sch := compiledSchema(t)
	const ok = `scenarios:
  - name: s
    server: {phases: [{admit: 5, window: 1s}]}
    clients: {count: 10, max_attempts: 3}
    policies: [{name: full-jitter, base: 100ms}]
`
	if err := sch.Validate(asJSON(t, []byte(ok))); err != nil {
		t.Fatalf("a good file: %v", err)
	}
	if _, err := Parse("ok.yaml", []byte(ok)); err != nil {
		t.Fatalf("a good file: %v", err)
	}
	for _, tc := range []struct{ name, from, to string }{
		{"unknown top-level field", "scenarios:", "scenarioz: []\nscenarios:"},
		{"unknown scenario field", "    server:", "    sever: {}\n    server:"},
		{"unknown server field", "{phases:", "{phasse: [], phases:"},
		{"field of another server kind", "{phases:", "{requests_per_minute: 5, phases:"},
		{"unknown policy field", "base: 100ms", "base: 100ms, cpa: 1s"},
		{"unknown policy type", "name: full-jitter,", "name: x, type: fool-jitter,"},
		{"unknown server type", "{phases:", "{type: queues, phases:"},
		{"count is text", "count: 10", "count: many"},
		{"count is 0", "count: 10", "count: 0"},
		{"negative duration", "base: 100ms", "base: -100ms"},
		{"duration without a unit", "base: 100ms", "base: 100"},
		{"probability above 1", "server: {phases: [{admit: 5, window: 1s}]}", "server: {type: error-mix, stream: true, stream_share: 1.5, failures: []}"},
		{"no policies", "    policies: [{name: full-jitter, base: 100ms}]\n", ""},
		{"no scenario name", "  - name: s\n    server", "  - server"},
	} {
		bad := strings.Replace(ok, tc.from, tc.to, 1)
		if bad == ok {
			t.Fatalf("%s: the test's replacement changed nothing", tc.name)
		}
		if _, err := Parse("bad.yaml", []byte(bad)); err == nil {
			t.Errorf("%s: the loader takes it:\n%s", tc.name, bad)
		}
		if err := sch.Validate(asJSON(t, []byte(bad))); err == nil {
			t.Errorf("%s: the schema takes it:\n%s", tc.name, bad)
		}
	}
}
