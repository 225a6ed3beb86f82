package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/retrysim/retrysim/internal/golden"
	"github.com/retrysim/retrysim/runs"

	"github.com/retrysim/retrysim/internal/racetest"
)

// outcome is everything a command run leaves: its output, its exit code
// and the files it wrote.
type outcome struct {
	stdout, stderr string
	code           int
	files          map[string]string
}

// runAndCollect runs args in-process and takes the files it wrote under
// dir, removing them so that the next run writes them anew.
func runAndCollect(t *testing.T, dir string, args ...string) outcome {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, errOut, code, _ := runCLI(t, args...)
	o := outcome{stdout: out, stderr: errOut, code: code, files: map[string]string{}}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		o.files[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	return o
}

func (o outcome) diff(t *testing.T, want outcome) {
	t.Helper()
	if o.code != want.code {
		t.Errorf("exit %d, want %d; stderr:\n%s", o.code, want.code, o.stderr)
	}
	if o.stdout != want.stdout {
		t.Errorf("stdout differs:\n%s", golden.Diff(want.stdout, o.stdout))
	}
	if o.stderr != want.stderr {
		t.Errorf("stderr differs:\n%s", golden.Diff(want.stderr, o.stderr))
	}
	for path, b := range want.files {
		got, ok := o.files[path]
		switch {
		case !ok:
			t.Errorf("%s not written", path)
		case got != b:
			t.Errorf("%s differs (%d bytes, want %d)", path, len(got), len(b))
		}
	}
	for path := range o.files {
		if _, ok := want.files[path]; !ok {
			t.Errorf("%s written, but not by the unsharded command", path)
		}
	}
}

// shardCases are command lines whose merged output must equal the
// unsharded output, in every format: OUT stands for a scratch directory
// for the files the command writes, IN for one holding its inputs.
var shardCases = [][]string{
	{"compare", "--seeds", "5"},
	{"compare", "--seeds", "5", "--format", "markdown"},
	{"compare", "--seeds", "5", "--format", "csv", "--scenario", "long-outage"},
	{"compare", "--seeds", "5", "--format", "json", "--seed", "9"},
	{"compare", "--seeds", "4", "--format", "html"},
	{"compare", "--format", "html", "--file", "IN/scenarios.yaml"},
	{"sweep", "--param", "clients=10:30:10", "--seeds", "3"},
	{"sweep", "--param", "clients=10:20:10", "--param", "capacity=2:4:2", "--seeds", "2", "--format", "markdown"},
	{"sweep", "--param", "base=100ms:300ms:100ms", "--seeds", "2", "--format", "csv"},
	{"sweep", "--param", "clients=10:20:10", "--seeds", "3", "--format", "json", "--plot-dir", "OUT/sweep", "--plot-format", "svg"},
	{"plot", "--plot-dir", "OUT/plots", "--seeds", "4", "--plot-format", "svg,png"},
	{"plot", "--plot-dir", "OUT/plots", "--plot-format", "svg", "--bucket", "250ms", "--scenario", "long-outage"},
	{"plot", "--plot-dir", "OUT/plots", "--plot-format", "json,csv", "--seeds", "3", "--scenario", "controls-outage"},
	{"report", "--out", "OUT/review.html", "--seeds", "3"},
	{"report", "--out", "-", "--bucket", "500ms"},
	{"check", "--scenario", "overload-burst", "--scenario", "long-outage", "--junit", "OUT/check.xml"},
	{"check", "--scenario", "overload-burst", "--seeds", "5", "--format", "markdown", "--baseline", "IN/baseline.json", "--tolerance", "5%"},
	{"check", "--file", "IN/scenarios.yaml", "--scenario", "rate-limited-burst", "--baseline", "IN/baseline.json"},
	{"check", "--scenario", "overload-burst", "--baseline", "IN/baseline-seeds.json", "--format", "markdown"},
}

// For N = 1, 2, 3 and 7 shards, 'retrysim merge' prints and writes
// exactly what the unsharded command does, byte for byte: stdout, stderr,
// the exit status and every file (tables, CSV, JSON, HTML, SVG, PNG).
func TestShardMergeByteIdentical(t *testing.T) {
	t.Parallel()
	in := t.TempDir()
	scenariosYAML, err := os.ReadFile(filepath.Join(docsRoot, "scenarios.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, "scenarios.yaml"), scenariosYAML, 0o644); err != nil {
		t.Fatal(err)
	}
	base, _, _, _ := runCLI(t, "compare", "--format", "json", "--seed", "3")
	if err := os.WriteFile(filepath.Join(in, "baseline.json"), []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	multi, _, _, _ := runCLI(t, "compare", "--format", "json", "--seeds", "8")
	if err := os.WriteFile(filepath.Join(in, "baseline-seeds.json"), []byte(multi), 0o644); err != nil {
		t.Fatal(err)
	}
	counts := []int{1, 2, 3, 7}
	if racetest.Enabled {
		counts = []int{3} // one goroutine per command: the plain run covers every count
	}
	for _, c := range shardCases {
		t.Run(strings.Join(c, " "), func(t *testing.T) {
			t.Parallel()
			scratch := t.TempDir()
			out := filepath.Join(scratch, "out")
			args := make([]string, len(c))
			for i, a := range c {
				if racetest.Enabled && a == "svg,png" {
					a = "svg" // PNG rendering is slow under -race; the plain run compares PNGs
				}
				a = strings.Replace(a, "OUT/", out+string(filepath.Separator), 1)
				args[i] = strings.Replace(a, "IN/", in+string(filepath.Separator), 1)
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				t.Fatal(err)
			}
			want := runAndCollect(t, out, args...)
			if want.code != 0 && want.code != 1 {
				t.Fatalf("unsharded: exit %d\n%s", want.code, want.stderr)
			}
			for _, n := range counts {
				shards := filepath.Join(scratch, fmt.Sprintf("shards-%d", n))
				for i := range n {
					_, errOut, code, _ := runCLI(t, append(slices.Clone(args), "--shard", fmt.Sprintf("%d/%d", i, n), "--shard-out", shards+"/")...)
					if code != 0 {
						t.Fatalf("shard %d/%d: exit %d\n%s", i, n, code, errOut)
					}
				}
				if written, _ := os.ReadDir(out); len(written) > 0 {
					t.Fatalf("a shard wrote into %s", out)
				}
				got := runAndCollect(t, out, "merge", shards)
				if err := os.MkdirAll(out, 0o755); err != nil {
					t.Fatal(err)
				}
				t.Run(fmt.Sprint(n), func(t *testing.T) { got.diff(t, want) })
			}
		})
	}
}

// writeShards runs args as n shards into dir and returns the file names.
func writeShards(t *testing.T, dir string, n int, args ...string) []string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range n {
		name := filepath.Join(dir, fmt.Sprintf("shard-%d-of-%d.json", i, n))
		_, errOut, code, _ := runCLI(t, append(slices.Clone(args), "--shard", fmt.Sprintf("%d/%d", i, n), "--shard-out", name)...)
		if code != 0 {
			t.Fatalf("shard %d/%d: exit %d\n%s", i, n, code, errOut)
		}
		names = append(names, name)
	}
	return names
}

// Missing, duplicated and mismatched shards exit 2, naming the file.
func TestMergeRefusesBadShards(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	three := writeShards(t, filepath.Join(dir, "a"), 3, "compare", "--seeds", "4")
	other := writeShards(t, filepath.Join(dir, "b"), 3, "compare", "--seeds", "5")
	two := writeShards(t, filepath.Join(dir, "c"), 2, "compare", "--seeds", "4")
	custom := filepath.Join(dir, "custom.yaml")
	yaml, err := os.ReadFile(filepath.Join(docsRoot, "scenarios.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(custom, yaml, 0o644); err != nil {
		t.Fatal(err)
	}
	before := writeShards(t, filepath.Join(dir, "d"), 2, "compare", "--seeds", "4", "--file", custom)
	if err := os.WriteFile(custom, append(yaml, "\n# changed\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	after := writeShards(t, filepath.Join(dir, "e"), 2, "compare", "--seeds", "4", "--file", custom)
	notShard := filepath.Join(dir, "results.json")
	out, _, _, _ := runCLI(t, "compare", "--seeds", "3", "--format", "json")
	if err := os.WriteFile(notShard, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	for _, tt := range []struct {
		name  string
		files []string
		want  []string
	}{
		{"missing", three[:2], []string{"missing shard(s) 2/3", three[0], three[1]}},
		{"duplicated", []string{three[0], three[1], three[1], three[2]}, []string{three[1] + ": is shard 1/3 again: " + three[1]}},
		{"duplicated copy", []string{three[0], three[1], three[2], other[1]}, []string{other[1] + ": ran \"retrysim compare --seeds 5\""}},
		{"other count", []string{three[0], three[1], three[2], two[1]}, []string{two[1] + ": is shard 1 of 2"}},
		{"other flags", []string{three[0], other[1], three[2]}, []string{other[1] + ": ran", "but " + three[0] + " ran \"retrysim compare --seeds 4\""}},
		{"other scenario file", []string{before[0], after[1]}, []string{after[1] + ": read another " + custom}},
		{"not a shard", []string{three[0], notShard}, []string{notShard + ": schema \"retrysim/multi-seed/v1\", want \"retrysim/shard/v4\""}},
		{"no such file", []string{filepath.Join(dir, "nope.json")}, []string{"nope.json"}},
		{"empty directory", []string{empty}, []string{empty + ": no *.json shard files"}},
		{"nothing", nil, []string{"merge needs the shard files"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code, _ := runCLI(t, append([]string{"merge"}, tt.files...)...)
			if code != 2 || out != "" {
				t.Fatalf("exit %d, stdout %q; want exit 2 and nothing on stdout", code, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
}

// Without --shard, a Kubernetes Indexed Job's JOB_COMPLETION_INDEX picks
// the shard, with the total from --shards or RETRYSIM_SHARDS. (Not
// parallel: it sets environment variables.)
func TestShardFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	args := []string{"compare", "--seeds", "5", "--format", "json"}
	want, _, _, _ := runCLI(t, args...)
	t.Setenv(envShards, "3")
	for i := range 3 {
		t.Setenv(envIndex, fmt.Sprint(i))
		if _, errOut, code, _ := runCLI(t, append(slices.Clone(args), "--shard-out", dir+"/")...); code != 0 {
			t.Fatalf("index %d: exit %d\n%s", i, code, errOut)
		}
	}
	got, errOut, code, _ := runCLI(t, "merge", dir)
	if code != 0 || got != want {
		t.Fatalf("merge: exit %d\n%s\n%s", code, errOut, golden.Diff(want, got))
	}
	// --shards overrides RETRYSIM_SHARDS; --shard overrides both.
	t.Setenv(envIndex, "1")
	for _, tt := range []struct {
		args []string
		file string
	}{
		{[]string{"--shards", "2"}, "shard-1-of-2.json"},
		{[]string{"--shard", "0/4"}, "shard-0-of-4.json"},
	} {
		if _, errOut, code, _ := runCLI(t, append(append(slices.Clone(args), tt.args...), "--shard-out", dir+"/")...); code != 0 {
			t.Fatalf("%v: exit %d\n%s", tt.args, code, errOut)
		}
		if _, err := os.Stat(filepath.Join(dir, tt.file)); err != nil {
			t.Errorf("%v: %v", tt.args, err)
		}
	}
	// An index without a total runs everything, as without a Job.
	os.Unsetenv(envShards)
	if got, _, code, _ := runCLI(t, args...); code != 0 || got != want {
		t.Errorf("JOB_COMPLETION_INDEX alone: exit %d, output differs: %v", code, got != want)
	}
	for _, tt := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{envIndex: "3", envShards: "3"}, nil, "shard index must be between 0 and 2"},
		{map[string]string{envIndex: "x", envShards: "3"}, nil, "$JOB_COMPLETION_INDEX=\"x\""},
		{map[string]string{envIndex: "0", envShards: "0"}, nil, "number of shards must be between 1"},
		{map[string]string{envIndex: "0", envShards: "two"}, nil, "$RETRYSIM_SHARDS=\"two\""},
		{map[string]string{}, []string{"--shards", "2"}, "--shards needs the shard's index"},
		{map[string]string{}, []string{"--shard", "1/2", "--shards", "3"}, "disagree"},
		{map[string]string{}, []string{"--shard", "2"}, "want I/N"},
	} {
		os.Unsetenv(envIndex)
		os.Unsetenv(envShards)
		for k, v := range tt.env {
			t.Setenv(k, v)
		}
		out, errOut, code, _ := runCLI(t, append(slices.Clone(args), tt.args...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v %v: exit %d, stdout %d bytes, stderr %q; want exit 2 and %q", tt.env, tt.args, code, len(out), errOut, tt.want)
		}
	}
}

// A single seed is not split.
func TestCompareOneSeedRefusesShard(t *testing.T) {
	t.Parallel()
	_, errOut, code, _ := runCLI(t, "compare", "--shard", "0/2")
	if code != 2 || !strings.Contains(errOut, "--seeds K > 1") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// forgeShard reads the shard file at path, edits it and writes it back
// with a checksum that matches, as a deliberate forger would.
func forgeShard(t *testing.T, path string, edit func(*runs.ShardFile)) {
	t.Helper()
	f, err := runs.LoadShardFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edit(f)
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// 'merge' presents only a command that shards. A file naming list,
// validate, serve or merge was replayed, and 'merge' of the file's own
// folder recursed until memory ran out.
func TestMergeReplaysOnlyShardingCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range [][]string{{"list"}, {"validate"}, {"help"}, {"serve"}, {"completion", "bash"}, {"merge", "DIR"}, {""}} {
		t.Run(c[0], func(t *testing.T) {
			t.Parallel()
			sub := filepath.Join(dir, "x"+c[0])
			name := writeShards(t, sub, 1, "compare", "--seeds", "2")[0]
			forgeShard(t, name, func(f *runs.ShardFile) {
				f.Command, f.Args = c[0], slices.Clone(c[1:])
				for i, a := range f.Args {
					f.Args[i] = strings.ReplaceAll(a, "DIR", sub)
				}
			})
			want := name + ": ran \"" + c[0] + "\", which is not a command that shards"
			if c[0] == "" {
				want = name + ": no command"
			}
			out, errOut, code, _ := runCLI(t, "merge", name)
			if code != 2 || out != "" || !strings.Contains(errOut, want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, naming the file", code, out, errOut)
			}
		})
	}
}

// The merge plans the command's work from the flag values the shards
// recorded, not by running their command line again: a recorded command
// line that does not parse changes nothing, and recorded values that do not
// fit the command's flags are refused (exit 2, naming the file).
func TestMergePlansFromRecordedFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := []string{"compare", "--seeds", "3", "--format", "csv"}
	want, _, code, _ := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("unsharded: exit %d", code)
	}
	names := writeShards(t, filepath.Join(dir, "a"), 2, args...)
	for _, name := range names {
		forgeShard(t, name, func(f *runs.ShardFile) { f.Args = []string{"--no-such-flag", "--format", "html"} })
	}
	if out, errOut, code, _ := runCLI(t, "merge", filepath.Join(dir, "a")); code != 0 || out != want {
		t.Errorf("a recorded command line that does not parse: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, errOut, out, want)
	}
	flags := 0 // compare's flags, as a shard records them
	forgeShard(t, names[0], func(f *runs.ShardFile) { flags = len(f.Flags) })
	for _, tt := range []struct {
		name string
		edit func(f *runs.ShardFile)
		want string
	}{
		{"format", func(f *runs.ShardFile) { setFlag(f, "format", `"xml"`) }, `flag --format: unknown format "xml"`},
		{"type", func(f *runs.ShardFile) { setFlag(f, "seeds", `"3"`) }, `flag --seeds: recorded value "3" is not of the flag's type`},
		{"negative", func(f *runs.ShardFile) { setFlag(f, "seeds", `-3`) }, `flag --seeds: recorded value -3 is not of the flag's type`},
		{"missing", func(f *runs.ShardFile) { f.Flags = f.Flags[1:] }, fmt.Sprintf("records %d flag value(s); retrysim compare has %d flags", flags-1, flags)},
		{"renamed", func(f *runs.ShardFile) { f.Flags[0].Name = "bogus" }, "flag value 1 is of --bogus; retrysim compare's flag 1 is --scenario"},
		{"other seeds", func(f *runs.ShardFile) { setFlag(f, "seeds", `4`) }, "group 1 of the shards has 3 seeds from"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			name := writeShards(t, filepath.Join(dir, tt.name), 1, args...)[0]
			forgeShard(t, name, tt.edit)
			out, errOut, code, _ := runCLI(t, "merge", name)
			if code != 2 || out != "" || !strings.Contains(errOut, name+": "+tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, name+": "+tt.want)
			}
		})
	}
}

// setFlag sets the recorded value of flag name in f.
func setFlag(f *runs.ShardFile, name, value string) {
	for i := range f.Flags {
		if f.Flags[i].Name == name {
			f.Flags[i].Value = []byte(value)
		}
	}
}

// Every shard file is untrusted input: a damaged, forged, older or endless
// file, or one that is not a file, is refused, naming it, with exit 2.
func TestMergeRefusesUntrustedFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	names := writeShards(t, filepath.Join(dir, "a"), 2, "plot", "--seeds", "3", "--plot-format", "json", "--plot-dir", filepath.Join(dir, "plots"))
	good, err := os.ReadFile(names[1])
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	damaged := write("damaged.json", bytes.Replace(good, []byte(`"seed":1,"values":[[`), []byte(`"seed":1,"values":[[9`), 1))
	truncated := write("truncated.json", good[:len(good)-100])
	older := write("older.json", bytes.Replace(good, []byte(`"retrysim/shard/v4"`), []byte(`"retrysim/shard/v3"`), 1))
	forged := filepath.Join(dir, "forged.json")
	write("forged.json", good)
	forgeShard(t, forged, func(f *runs.ShardFile) { f.Groups[0].Runs[0].Values[0][0] = -3 })
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		file, want string
	}{
		{damaged, damaged + ": checksum"},
		{truncated, truncated + ": not a retrysim shard file"},
		{older, older + `: schema "retrysim/shard/v3" is the shard format of an older retrysim`},
		{forged, forged + ": group 1 (overload-burst): seed index 1, policy immediate, completed: -3 is not a finite number ≥ 0"},
		{fifo, fifo + ": not a regular file"},
		{"/dev/zero", "/dev/zero: not a regular file"},
	} {
		out, errOut, code, _ := runCLI(t, "merge", names[0], tt.file)
		if code != 2 || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.file, code, out, errOut, tt.want)
		}
	}
	// Runs that do not fit the recorded flags are the files' fault too.
	four := func(f *runs.ShardFile) {
		f.Args = []string{"--seeds", "4", "--plot-dir", filepath.Join(dir, "plots"), "--plot-format", "json"}
		for i := range f.Flags {
			if f.Flags[i].Name == "seeds" {
				f.Flags[i].Value = []byte("4")
			}
		}
	}
	zeroth, err := os.ReadFile(names[0])
	if err != nil {
		t.Fatal(err)
	}
	first, second := write("first.json", zeroth), write("second.json", good)
	forgeShard(t, first, four)
	forgeShard(t, second, four)
	out, errOut, code, _ := runCLI(t, "merge", first, second)
	if want := first + " (and 1 more shards): group 1 of the shards has 3 seeds from"; code != 2 || out != "" || !strings.Contains(errOut, want) {
		t.Errorf("runs that do not fit: exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, want)
	}
	// A folder's *.json that is not a file is refused too.
	if err := os.Mkdir(filepath.Join(dir, "a", "odd.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code, _ := runCLI(t, "merge", filepath.Join(dir, "a")); code != 2 || !strings.Contains(errOut, "odd.json: not a regular file") {
		t.Errorf("a directory named odd.json: exit %d, stderr %q", code, errOut)
	}
}

// A scenario file whose servers read capacity traces shards (the shard
// failed, blaming --file), and each shard records the traces' bytes:
// the merge reads no trace from disk, and refuses shards that read
// different traces.
func TestShardWithTrace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("admit.csv", "start,admit\n0,0\n2s,5\n")
	write("workers.csv", "start,concurrency\n0,2\n3s,6\n")
	yaml := write("traced.yaml", `scenarios:
  - name: traced-windows
    server: {trace: admit.csv, window: 1s, reject: overloaded, response_time: 100ms}
    clients: {count: 30, spread: 1s, deadline: 30s}
    policies: [{name: full-jitter, max_attempts: 6}, {name: gated, max_attempts: 6, throttle: {rate: 10}}]
  - name: traced-queue
    server: {type: queue, trace: workers.csv, service: 200ms}
    clients: {count: 30, deadline: 30s}
    policies: [{name: full-jitter, max_attempts: 4}]
`)
	for _, args := range [][]string{
		{"compare", "--file", yaml, "--seeds", "4", "--format", "json"},
		{"compare", "--file", yaml, "--scenario", "traced-queue", "--seeds", "3"},
	} {
		want, errOut, code, _ := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, errOut)
		}
		shards := filepath.Join(dir, "shards-"+args[len(args)-1])
		names := writeShards(t, shards, 2, args...)
		f, err := runs.LoadShardFile(names[0])
		if err != nil {
			t.Fatal(err)
		}
		var recorded []string
		for _, in := range f.Inputs {
			recorded = append(recorded, in.Flag+" "+in.Path)
		}
		if w := []string{"--file " + yaml, "trace " + filepath.Join(dir, "admit.csv"), "trace " + filepath.Join(dir, "workers.csv")}; !slices.Equal(recorded, w) {
			t.Errorf("inputs %q, want %q", recorded, w)
		}
		// The merge takes the traces from the shards, not the disk.
		for _, name := range []string{"admit.csv", "workers.csv", "traced.yaml"} {
			os.Rename(filepath.Join(dir, name), filepath.Join(dir, name+".away"))
		}
		got, errOut, code, _ := runCLI(t, "merge", shards)
		if code != 0 || got != want {
			t.Errorf("merge: exit %d\n%s\n%s", code, errOut, golden.Diff(want, got))
		}
		for _, name := range []string{"admit.csv", "workers.csv", "traced.yaml"} {
			os.Rename(filepath.Join(dir, name+".away"), filepath.Join(dir, name))
		}
	}
	// A trace changed between the shards is refused.
	a := writeShards(t, filepath.Join(dir, "a"), 2, "compare", "--file", yaml, "--seeds", "2")
	write("workers.csv", "start,concurrency\n0,3\n3s,6\n")
	b := writeShards(t, filepath.Join(dir, "b"), 2, "compare", "--file", yaml, "--seeds", "2")
	_, errOut, code, _ := runCLI(t, "merge", a[0], b[1])
	if code != 2 || !strings.Contains(errOut, b[1]+": read another "+filepath.Join(dir, "workers.csv")) {
		t.Errorf("changed trace: exit %d, stderr %q", code, errOut)
	}
}

// A shard does not write a partial result larger than a merge reads.
func TestShardRefusesOversizedResult(t *testing.T) {
	defer func(limit int) { maxShardOut = limit }(maxShardOut)
	maxShardOut = 1000
	out, errOut, code, _ := runCLI(t, "compare", "--seeds", "2", "--shard", "0/1")
	if code != 2 || out != "" || !strings.Contains(errOut, "shard 0/1: its partial result is") || !strings.Contains(errOut, "over the 128 MiB a merge reads; use more shards") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
