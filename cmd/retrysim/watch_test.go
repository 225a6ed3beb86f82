package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTerminal is a buffer that passes for a terminal
// (progress.Terminal asks it).
type fakeTerminal struct{ bytes.Buffer }

func (*fakeTerminal) IsTerminal() bool { return true }

// typoScenario is a scenario file whose policy allows 80,000,000 attempts
// and no deadline: a typo whose work estimate is huge, though the server
// admits every request, so the run itself is short.
func typoScenario(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "typo.yaml")
	src := `scenarios:
  - name: typo
    server:
      phases:
        - admit: 1000
          window: 1s
    clients: {count: 20, max_attempts: 80000000}
    policies:
      - name: capped-exponential
        expect: ["completed >= 20"]
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A single run and check with a long work estimate draw a bar on a
// terminal, and remove it; stdout is the same as off a terminal.
func TestProgressOnTerminal(t *testing.T) {
	t.Parallel()
	file := typoScenario(t)
	for _, tt := range []struct {
		args []string
		bar  string
	}{
		{[]string{"compare", "--file", file}, "typo, seed 1"},
		{[]string{"check", "--file", file}, "check"},
		{[]string{"compare", "--file", file, "--seeds", "3"}, "typo: 3 seeds"},
	} {
		t.Run(tt.args[0], func(t *testing.T) {
			var out bytes.Buffer
			var term fakeTerminal
			if err := run(context.Background(), append([]string{"retrysim"}, tt.args...), &out, &term); err != nil {
				t.Fatal(err)
			}
			plain, plainErr, _, err := runCLI(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != plain {
				t.Errorf("stdout on a terminal differs:\n%s\nwant\n%s", out.String(), plain)
			}
			drawn := strings.TrimPrefix(term.String(), plainErr)
			if !strings.HasPrefix(term.String(), plainErr) || !strings.Contains(drawn, "\r"+tt.bar+" ") {
				t.Errorf("stderr on a terminal %q: want the messages %q and then a bar %q", term.String(), plainErr, tt.bar)
			}
			if !strings.HasSuffix(drawn, "  \r") {
				t.Errorf("the bar was not cleared: %q", drawn)
			}
			if strings.Contains(plainErr, "\r") {
				t.Errorf("a bar was drawn off a terminal: %q", plainErr)
			}
		})
	}
}
