package main

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// readAll returns the files of dir by name, with their bytes.
func readAll(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}

// An output path that names an input file is refused before anything runs
// (exit 2), whatever name it is given by, and the input keeps its bytes.
func TestOutputIsNeverAnInput(t *testing.T) {
	t.Parallel()
	good := burstFile(t, "500ms", `"completed >= 18"`)
	baseline, _, _, err := runCLI(t, "compare", "--file", good, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b := filepath.Join(dir, "b.json")
	if err := os.WriteFile(b, []byte(baseline), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("b.json", link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.yaml")
	if err := os.Link(good, hard); err != nil {
		t.Fatal(err)
	}
	goodBytes, _ := os.ReadFile(good)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--file", good, "--baseline", b, "--junit", b}, "--junit " + b + " is the --baseline file"},
		{[]string{"check", "--file", good, "--baseline", b, "--junit", filepath.Join(dir, "sub", "..", ".", "b.json")}, "is the --baseline file"},
		{[]string{"check", "--file", good, "--baseline", link, "--junit", b}, "is the --baseline file " + link},
		{[]string{"check", "--file", good, "--junit", good}, "is the --file file"},
		{[]string{"check", "--file", good, "--junit", hard}, "is the --file file"},
		{[]string{"report", "--file", good, "--out", hard}, "--out " + hard + " is the --file file " + good},
		{[]string{"report", "--file", hard, "--out", good}, "is the --file file"},
	} {
		_, errOut, code, _ := runCLI(t, tt.args...)
		if code != exitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tt.args, code, errOut, tt.want)
		}
		if got, _ := os.ReadFile(b); string(got) != baseline {
			t.Fatalf("%v: the baseline changed:\n%s", tt.args, got)
		}
		if got, _ := os.ReadFile(good); string(got) != string(goodBytes) {
			t.Fatalf("%v: the scenario file changed:\n%s", tt.args, got)
		}
	}
	if files := readAll(t, dir); len(files) != 3 {
		t.Errorf("files left behind: %v", slices.Sorted(maps.Keys(files)))
	}
}

// A check that stops before it has results (bad baseline, refused estimate,
// Ctrl-C) leaves an existing --junit file as it was, and no temporary file.
func TestJUnitKeptWhenCheckStops(t *testing.T) {
	t.Parallel()
	good := burstFile(t, "500ms", `"completed >= 18"`)
	dir := t.TempDir()
	junit := filepath.Join(dir, "check.xml")
	const old = "<testsuites>previous run</testsuites>\n"
	if err := os.WriteFile(junit, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name string
		ctx  context.Context
		args []string
		code int
	}{
		{"bad baseline", context.Background(), []string{"check", "--file", good, "--baseline", writeFile(t, "b.json", "{}")}, exitUsage},
		{"refused estimate", context.Background(), []string{"check", "--scenario", "long-outage", "--seeds", "100000"}, exitUsage},
		{"interrupted", cancelled, []string{"check", "--file", good}, exitInterrupted},
	} {
		_, errOut, code, _ := runCLIContext(t, tt.ctx, append(tt.args, "--junit", junit)...)
		if code != tt.code {
			t.Errorf("%s: exit %d, want %d; stderr %q", tt.name, code, tt.code, errOut)
		}
		if files := readAll(t, dir); len(files) != 1 || files["check.xml"] != old {
			t.Errorf("%s: %s now holds %v, want only check.xml as it was", tt.name, dir, files)
		}
	}
	// A check that runs replaces the file, and says so.
	_, errOut, code, _ := runCLI(t, "check", "--file", good, "--junit", junit)
	if got, _ := os.ReadFile(junit); code != 0 || !strings.Contains(string(got), "<testsuites") || string(got) == old {
		t.Errorf("check: exit %d, JUnit %q", code, got)
	}
	if !strings.Contains(errOut, "wrote "+junit) {
		t.Errorf("check: stderr %q does not say it wrote %s", errOut, junit)
	}
}

// Every file a command writes is written whole or not at all: when writing
// fails (here, a file size limit of 0 makes every write fail), the files of
// the previous run are left as they were, and no temporary file remains.
func TestFailedWriteKeepsOldFiles(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	bin := builtBinary(t)
	for _, tt := range []struct {
		name  string
		args  []string
		files []string
	}{
		{"plot", []string{"plot", "--plot-dir", "DIR", "--plot-format", "png,svg,json,csv"},
			[]string{"timeline.png", "timeline.svg", "load.svg", "cdf.png", "timeline.json", "timeline.csv"}},
		{"sweep", []string{"sweep", "--param", "clients=10:20:10", "--plot-dir", "DIR", "--plot-format", "svg"},
			[]string{"sweep-completed.svg", "sweep-attempts.svg"}},
		{"check", []string{"check", "--scenario", "overload-burst", "--junit", "DIR/check.xml"}, []string{"check.xml"}},
		{"report", []string{"report", "--out", "DIR/review.html"}, []string{"review.html"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, f := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("previous "+f), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := readAll(t, dir)
			args := slices.Clone(tt.args)
			for i := range args {
				args[i] = strings.Replace(args[i], "DIR", dir, 1)
			}
			cmd := exec.Command("bash", append([]string{"-c", `ulimit -f 0 && exec "$0" "$@"`, bin}, args...)...)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "file too large") {
				t.Errorf("%v under ulimit -f 0: %v, output %q; want a failure to write", args, err, out)
			}
			if after := readAll(t, dir); !maps.Equal(before, after) {
				t.Errorf("%v changed the directory:\nbefore %v\nafter  %v", args, before, after)
			}
		})
	}
}

// The figures and data of one plot run replace those of the previous run
// together: when a later file fails to be written (a file size limit that
// the first file fits in), not even the first is replaced.
func TestFailedWriteReplacesNoFigure(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	bin := builtBinary(t)
	fresh := t.TempDir()
	if out, err := exec.Command(bin, "plot", "--plot-dir", fresh, "--plot-format", "svg,json").CombinedOutput(); err != nil {
		t.Fatalf("plot: %v\n%s", err, out)
	}
	made := readAll(t, fresh)
	first := len(made["timeline.svg"]) // written first
	blocks := (first + 1023) / 1024    // ulimit -f counts 1024-byte blocks
	larger := false
	for _, data := range made {
		larger = larger || len(data) > blocks*1024
	}
	if first == 0 || !larger {
		t.Fatalf("no file is larger than timeline.svg rounded up (%d bytes): %d files", blocks*1024, len(made))
	}
	dir := t.TempDir()
	for name := range made {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("previous "+name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := readAll(t, dir)
	cmd := exec.Command("bash", "-c", `ulimit -f `+strconv.Itoa(blocks)+` && exec "$0" "$@"`, bin, "plot", "--plot-dir", dir, "--plot-format", "svg,json")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "file too large") {
		t.Errorf("plot under ulimit -f %d: %v, output %q; want a failure to write", blocks, err, out)
	}
	after := readAll(t, dir)
	for _, name := range slices.Sorted(maps.Keys(after)) {
		if after[name] != before[name] {
			t.Errorf("a failed plot changed %s (%d bytes now)", name, len(after[name]))
		}
	}
	if len(after) != len(before) {
		t.Errorf("a failed plot left %d files, want %d: %v", len(after), len(before), slices.Sorted(maps.Keys(after)))
	}
}

// An output path that is a symbolic link is written through, and an
// existing file keeps its permissions (docs/output.md).
func TestOutputThroughLinkKeepsMode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "real.xml")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.xml")
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if _, errOut, code, _ := runCLI(t, "check", "--scenario", "overload-burst", "--junit", link); code != 0 {
		t.Fatalf("check: exit %d %s", code, errOut)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced by a plain file: %v", err)
	}
	got, err := os.ReadFile(target)
	if err != nil || !strings.Contains(string(got), "<testsuites") {
		t.Fatalf("the link's target holds %q, %v; want the JUnit report", got, err)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o600 {
		t.Errorf("the target's mode is %v, want its old 0600", fi.Mode().Perm())
	}
}
