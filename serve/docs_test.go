package serve_test

import (
	"encoding/json"
	"github.com/retrysim/retrysim/internal/docnames"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
)

// Every serve.X, policies.X, machine.X and sim.X that docs/serve.md names
// is declared by that package (a type, function, constant or variable; a
// method is named as Type.Method and checked by its type).
func TestDocsNamesExist(t *testing.T) {
	doc, err := os.ReadFile("../docs/serve.md")
	if err != nil {
		t.Fatal(err)
	}
	for pkg, dir := range map[string]string{"serve": ".", "policies": "../policies", "machine": "../policies/machine", "sim": "../sim"} {
		declared := declaredNames(t, dir)
		for _, m := range regexp.MustCompile(`\b`+pkg+`\.([A-Z]\w*)`).FindAllStringSubmatch(string(doc), -1) {
			if !declared[m[1]] {
				t.Errorf("docs/serve.md names %s.%s, which %s does not declare", pkg, m[1], dir)
			}
		}
	}
}

func declaredNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	names, err := docnames.Declared(dir)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// Any request body gets an answer: a message, or a JSON error with a
// status the handler documents; never a panic.
func FuzzMessagesBody(f *testing.F) {
	for _, s := range []string{okRequest, "", "{", "null", "[]", `{"model":1}`, `{"model":"m","max_tokens":-1,"messages":[1]}`,
		`{"model":"m","max_tokens":1e30,"messages":[{}]}`, `{"model":"m","max_tokens":1,"messages":[{}],"stream":"yes"}`} {
		f.Add(s)
	}
	model := &sim.CapacityWindows{ResponseTime: sim.Fixed(0), Phases: []sim.Phase{{Admit: 1 << 30, Window: time.Hour, Reject: rejection529}}}
	h, err := serve.NewHandler(model, serve.WithMaxBody(1<<16))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, "/v1/messages", strings.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch w.Code {
		case 200, 400, 413:
		default:
			t.Fatalf("status %d for %q", w.Code, body)
		}
		if w.Header().Get("request-id") == "" {
			t.Fatalf("no request-id for %q", body)
		}
		if ct := w.Header().Get("content-type"); ct == "application/json" && !json.Valid(w.Body.Bytes()) {
			t.Fatalf("invalid JSON %q for %q", w.Body.String(), body)
		}
	})
}
