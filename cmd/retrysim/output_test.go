package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// Data goes to stdout, messages to stderr: stdout of a command that writes
// files as well as data still parses as its format, and commands that only
// write files print nothing on stdout.
func TestStdoutIsOnlyData(t *testing.T) {
	dir := t.TempDir()
	parseJSON := func(out string) error { var v any; return json.Unmarshal([]byte(out), &v) }
	parseCSV := func(out string) error { _, err := csv.NewReader(strings.NewReader(out)).ReadAll(); return err }
	empty := func(out string) error {
		if out != "" {
			return fmt.Errorf("stdout is not empty: %q", out)
		}
		return nil
	}
	for _, tt := range []struct {
		args  []string
		parse func(string) error
	}{
		{[]string{"sweep", "--param", "clients=10:20:10", "--format", "json", "--plot-dir", filepath.Join(dir, "json"), "--plot-format", "svg"}, parseJSON},
		{[]string{"sweep", "--param", "clients=10:20:10", "--format", "csv", "--plot-dir", filepath.Join(dir, "csv"), "--plot-format", "svg"}, parseCSV},
		{[]string{"plot", "--plot-dir", filepath.Join(dir, "plot"), "--plot-format", "svg"}, empty},
		{[]string{"report", "--out", filepath.Join(dir, "report.html")}, empty},
	} {
		stdout, stderr, _, err := runCLI(t, tt.args...)
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if err := tt.parse(stdout); err != nil {
			t.Errorf("%v: stdout does not parse: %v\n%s", tt.args, err, stdout)
		}
		if !strings.Contains(stderr, "wrote "+dir) {
			t.Errorf("%v: stderr does not say what was written: %q", tt.args, stderr)
		}
	}
}
