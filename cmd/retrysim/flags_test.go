package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// One vocabulary: --format is what goes to stdout, --plot-dir and
// --plot-format say where images go and in which formats, --out is the one
// file a command writes. Help shows only these names.
func TestFlagVocabulary(t *testing.T) {
	for _, tt := range []struct {
		command    string
		want, hide []string
	}{
		{"plot", []string{"--plot-dir DIR", "--plot-format FORMATS"}, []string{"--out", "--format", "-o "}},
		{"sweep", []string{"--plot-dir DIR", "--plot-format FORMATS", "--format string"}, []string{"--plot DIR", "--plot value", "--out"}},
		{"report", []string{"--out FILE"}, []string{"--plot"}},
	} {
		help, _, _, err := runCLI(t, tt.command, "--help")
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(help, w) {
				t.Errorf("%s --help lacks %q:\n%s", tt.command, w, help)
			}
		}
		for _, h := range tt.hide {
			if strings.Contains(help, h) {
				t.Errorf("%s --help shows %q, an old or foreign name:\n%s", tt.command, h, help)
			}
		}
	}
}

// The old names still work, as hidden aliases; giving an old and a new name
// of the same flag is an error.
func TestOldFlagNames(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"plot", "--out", filepath.Join(dir, "a"), "--format", "svg"},
		{"plot", "-o", filepath.Join(dir, "b"), "--plot-format", "svg"},
		{"plot", "--plot-dir", filepath.Join(dir, "c"), "--plot-format", "svg"},
		{"sweep", "--param", "clients=10:20:10", "--plot", filepath.Join(dir, "d"), "--plot-format", "svg"},
		{"sweep", "--param", "clients=10:20:10", "--plot-dir", filepath.Join(dir, "e"), "--plot-format", "svg"},
	} {
		if _, _, _, err := runCLI(t, args...); err != nil {
			t.Errorf("%v: %v", args, err)
			continue
		}
		if entries, err := os.ReadDir(args[len(args)-3]); err != nil || len(entries) == 0 {
			t.Errorf("%v wrote no images (%v)", args, err)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"plot", "--out", "x", "--plot-dir", "y"}, "--plot-dir and --out are the same flag"},
		{[]string{"plot", "--plot-dir", "x", "--format", "svg", "--plot-format", "png"}, "--plot-format and --format are the same flag"},
		{[]string{"sweep", "-p", "clients=1", "--plot", "x", "--plot-dir", "y"}, "--plot-dir and --plot are the same flag"},
		{[]string{"plot", "--plot-dir", "x", "--plot-format", "gif"}, "--plot-format: unknown image format \"gif\""},
		{[]string{"sweep", "-p", "clients=1", "--plot-dir", "x", "--plot-format", "gif"}, "--plot-format: unknown image format \"gif\""},
		{[]string{"plot"}, "plot needs --plot-dir DIR"},
	} {
		_, _, _, err := runCLI(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, new(usageError)) {
			t.Errorf("%v: error %v, want a usage error containing %q", tt.args, err, tt.want)
		}
	}
}
