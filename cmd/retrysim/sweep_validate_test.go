package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A sweep point the scenario loader would refuse in a file stops the
// sweep before anything runs, with exit 2, the point and the field: a
// base above the cap, and retries with no wait (bounded by a deadline
// alone) against a server that answers at once, which the engine would
// otherwise stop at run time (exit 1).
func TestSweepRefusesPointsTheLoaderWould(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "s.yaml")
	err := os.WriteFile(file, []byte(`scenarios:
  - name: s
    server: {response_time: 10ms, phases: [{reject: overloaded}]}
    clients: {count: 5, deadline: 2s}
    policies:
      - {name: immediate, delay: 0s}
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "--param", "base=1h:2h:1h"},
			"--param base=1h0m0s: policies[1].cap: must be at least base (1h0m0s), got 8s"},
		{[]string{"sweep", "--file", file, "--param", "response_time=0s:10ms:10ms"},
			`--param response_time=0s: policies[0].max_attempts: policy "immediate" retries with no wait`},
	} {
		out, errOut, code, _ := runCLI(t, tt.args...)
		if code != exitUsage || !strings.Contains(errOut, tt.want) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.args, code, out, errOut, tt.want)
		}
	}
}
