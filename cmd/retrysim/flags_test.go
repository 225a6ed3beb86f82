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
		{[]string{"plot", "--plot-dir", "x", "--plot-format", "gif"}, "--plot-format: unknown format \"gif\" (want one or more of png, svg, json, csv,"},
		{[]string{"sweep", "-p", "clients=1", "--plot-dir", "x", "--plot-format", "gif"}, "--plot-format: unknown format \"gif\" (want one or more of png, svg, e.g."},
		{[]string{"plot"}, "plot needs --plot-dir DIR"},
	} {
		_, _, _, err := runCLI(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, new(usageError)) {
			t.Errorf("%v: error %v, want a usage error containing %q", tt.args, err, tt.want)
		}
	}
}

// A flag that takes one value, given twice, is refused with exit 2 naming it
// (urfave/cli alone would keep the last value silently); an alias counts as
// the flag. Flags meant to repeat still do.
func TestRepeatedFlagRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		flag string
	}{
		{[]string{"compare", "--seed", "1", "--seed", "7"}, "--seed"},
		{[]string{"compare", "--scenario", "long-outage", "-s", "overload-burst"}, "--scenario"},
		{[]string{"report", "--out", "-", "--scenario", "long-outage", "--scenario", "overload-burst"}, "--scenario"},
		{[]string{"compare", "--format", "json", "--format", "csv"}, "--format"},
		{[]string{"compare", "--force", "--force"}, "--force"},
		{[]string{"-q", "compare", "--quiet"}, "--quiet"}, // a flag of every command, before or after it
		{[]string{"sweep", "--param", "clients=1", "--seeds", "2", "--seeds", "3"}, "--seeds"},
		{[]string{"list", "--file", "a.yaml", "-f", "b.yaml"}, "--file"},
		{[]string{"plot", "--plot-dir", filepath.Join(dir, "a"), "--plot-dir", filepath.Join(dir, "b")}, "--plot-dir"},
		{[]string{"check", "--junit", "a.xml", "--junit", "b.xml"}, "--junit"},
	} {
		out, errOut, code, _ := runCLI(t, tt.args...)
		want := tt.flag + " is given 2 times"
		if code != exitUsage || !strings.Contains(errOut, want) || out != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %d bytes; want exit 2 and %q", tt.args, code, errOut, len(out), want)
		}
	}
	for _, args := range [][]string{
		{"sweep", "--param", "clients=1", "-p", "capacity=2", "--format", "csv"},
		{"check", "--scenario", "overload-burst", "-s", "long-outage"},
	} {
		if out, errOut, code, _ := runCLI(t, args...); code != 0 || out == "" {
			t.Errorf("%v: exit %d, %s", args, code, errOut)
		}
	}
}
