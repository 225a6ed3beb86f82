package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validate --exec refuses a scenario whose operations have priorities (a
// program sends none; validate's own clients do), as bad input, before
// any run.
func TestValidateRefusesPriorities(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.yaml")
	yaml := `scenarios:
  - name: prio
    server: {type: reserve-shedder, capacity: 2, inner: {type: queue, concurrency: 2, service: 10ms}}
    clients: {count: 4, priorities: {critical: 0.5}}
    policies: [{name: once, type: immediate, max_attempts: 1}]
`
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, code, err := runCLI(t, "validate", "--file", file, "--exec", "true", "--preset", "once")
	if code != 2 || err == nil || !strings.Contains(err.Error(), "priorities") || !strings.Contains(err.Error(), "x-retrysim-priority") {
		t.Fatalf("exit %d, %v; want exit 2 saying only validate's own clients send priorities", code, err)
	}
}
