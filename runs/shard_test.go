package runs

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/sweep"
)

func TestParseShard(t *testing.T) {
	for _, text := range []string{"0/1", "2/3", "6/7"} {
		sh, err := ParseShard(text)
		if err != nil || sh.String() != text {
			t.Errorf("ParseShard(%q) = %v, %v", text, sh, err)
		}
	}
	for _, text := range []string{"", "1", "3/3", "-1/3", "1/0", "a/b", "1/2/3", "0/100001"} {
		if _, err := ParseShard(text); err == nil {
			t.Errorf("ParseShard(%q) gave no error", text)
		}
	}
}

// Every unit belongs to exactly one shard, and consecutive units go to
// consecutive shards whatever the groups' sizes.
func TestOwnedSeedsPartition(t *testing.T) {
	s := scenariotest.Builtin(t, "overload-burst")
	groups := []Group{{Scenario: s, Seeds: 5}, {Scenario: s, Seeds: 1}, {Scenario: s, Seeds: 0}, {Scenario: s, Seeds: 9}}
	for n := 1; n <= 8; n++ {
		unit := 0
		seen := make([]map[int]int, len(groups))
		for g := range seen {
			seen[g] = map[int]int{}
		}
		for i := range n {
			for g, seeds := range OwnedSeeds(groups, Shard{i, n}) {
				for _, s := range seeds {
					if _, dup := seen[g][s]; dup {
						t.Fatalf("n=%d: group %d seed %d owned twice", n, g, s)
					}
					seen[g][s] = i
				}
			}
		}
		for g, gr := range groups {
			for s := range gr.Seeds {
				owner, ok := seen[g][s]
				if !ok || owner != unit%n {
					t.Fatalf("n=%d: group %d seed %d owned by %d (%v), want %d", n, g, s, owner, ok, unit%n)
				}
				unit++
			}
		}
	}
}

// runShards runs groups in n shards and merges the shard files after a
// round trip through JSON.
func runShards(t *testing.T, groups []Group, n int) *Merged {
	t.Helper()
	var names []string
	var files []*ShardFile
	for i := range n {
		parts, err := RunShard(context.Background(), groups, Shard{i, n}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		f := ShardFile{Schema: ShardSchema, Command: "test", Args: []string{}, Shard: i, Shards: n, Groups: parts}
		if err := f.Write(&buf); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("shard-%d.json", i)
		back, err := ReadShardFile(name, &buf)
		if err != nil {
			t.Fatal(err)
		}
		names, files = append(names, name), append(files, back)
	}
	m, err := MergeShards(names, files)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sameBits reports whether two MultiSeeds hold the same values, bit for
// bit (NaN where the other has NaN).
func sameBits(a, b *MultiSeed) bool {
	if !reflect.DeepEqual(a.Policies, b.Policies) || !reflect.DeepEqual(a.Metrics, b.Metrics) || a.Seeds() != b.Seeds() || a.FirstSeed != b.FirstSeed {
		return false
	}
	for p := range a.values {
		for m := range a.values[p] {
			for s, v := range a.values[p][m] {
				if math.Float64bits(v) != math.Float64bits(b.values[p][m][s]) && !(math.IsNaN(v) && math.IsNaN(b.values[p][m][s])) {
					return false
				}
			}
		}
	}
	return true
}

// Merged shards give exactly what one unsharded run gives: metrics to
// the bit, plot data, sweeps.
func TestMergedShardsEqualUnsharded(t *testing.T) {
	s := scenariotest.Builtin(t, "overload-burst")
	ctx := context.Background()
	const k = 6
	want, err := Collect(ctx, s, s.Seed, k, nil)
	if err != nil {
		t.Fatal(err)
	}
	bucket := DefaultBucket(s.Server)
	wantPlot, err := CollectPlotData(ctx, s, s.Seed, k, bucket, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantPlotRuns := wantPlot.Runs
	wantPlot.Runs = nil
	ps := []sweep.Param{mustParam(t, "clients=5:15:5")}
	wantSweep, err := RunSweep(ctx, s, ps, s.Seed, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	points, err := SweepPoints(s, ps)
	if err != nil {
		t.Fatal(err)
	}
	groups := []Group{{Scenario: s, First: s.Seed, Seeds: k}, {Scenario: s, First: s.Seed, Seeds: k, Plot: true, Bucket: bucket}}
	for _, pt := range points {
		groups = append(groups, Group{Scenario: pt.Scenario, First: s.Seed, Seeds: 2, Label: pt.Label})
	}
	for _, n := range []int{1, 2, 3, 7, 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			m := runShards(t, groups, n)
			got, err := m.MultiSeed(0, groups[0])
			if err != nil {
				t.Fatal(err)
			}
			if !sameBits(got, want) {
				t.Error("merged metrics differ from the unsharded ones")
			}
			gotPlot, err := m.PlotData(1, groups[1])
			if err != nil {
				t.Fatal(err)
			}
			if !sameBits(gotPlot.Runs, wantPlotRuns) {
				t.Error("merged plot runs differ")
			}
			gotPlot.Runs = nil
			if !reflect.DeepEqual(gotPlot, wantPlot) {
				t.Error("merged plot data (latencies, timelines) differ")
			}
			plan, err := SweepPlan(s, ps, s.Seed, 2)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Execute(ctx, Plan{Groups: append(groups[:2:2], plan.Groups...)}, Mode{Merged: m})
			if err != nil {
				t.Fatal(err)
			}
			gotSweep, err := SweepOf(s, ps, s.Seed, 2, &Results{Groups: res.Groups[2:]})
			if err != nil {
				t.Fatal(err)
			}
			for i := range wantSweep.Points {
				if !sameBits(gotSweep.Points[i].Runs, wantSweep.Points[i].Runs) {
					t.Errorf("sweep point %d differs", i)
				}
			}
		})
	}
}

func mustParam(t *testing.T, spec string) sweep.Param {
	t.Helper()
	p, err := sweep.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Floats keep every float64 exactly, and NaN and the infinities.
func TestFloatsRoundTrip(t *testing.T) {
	in := Floats{0, math.Copysign(0, -1), 1.0 / 3, 5e-324, math.MaxFloat64, 1e21, 123456789.123, math.NaN(), math.Inf(1), math.Inf(-1)}
	b, err := in.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var out Floats
	if err := out.UnmarshalJSON(b); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	for i := range in {
		if math.Float64bits(in[i]) != math.Float64bits(out[i]) && !(math.IsNaN(in[i]) && math.IsNaN(out[i])) {
			t.Errorf("value %d: %v came back as %v (%s)", i, in[i], out[i], b)
		}
	}
	if err := out.UnmarshalJSON([]byte(`["x"]`)); err == nil {
		t.Error("a string read as a number")
	}
}

// Shards that do not belong together are refused, naming the file.
func TestMergeShardsRefuses(t *testing.T) {
	s := scenariotest.Builtin(t, "overload-burst")
	groups := []Group{{Scenario: s, First: s.Seed, Seeds: 4}}
	shard := func(i, n int, edit func(*ShardFile)) *ShardFile {
		parts, err := RunShard(context.Background(), groups, Shard{i, n}, nil)
		if err != nil {
			t.Fatal(err)
		}
		f := &ShardFile{Schema: ShardSchema, Version: "v1", Command: "compare", Args: []string{"--seeds", "4"}, Shard: i, Shards: n, Groups: parts}
		if edit != nil {
			edit(f)
		}
		return f
	}
	for _, tt := range []struct {
		name  string
		files []*ShardFile
		want  string
	}{
		{"missing", []*ShardFile{shard(0, 3, nil), shard(2, 3, nil)}, "missing shard(s) 1/3"},
		{"duplicate", []*ShardFile{shard(0, 2, nil), shard(1, 2, nil), shard(1, 2, nil)}, "c.json: is shard 1/2 again: b.json"},
		{"count", []*ShardFile{shard(0, 2, nil), shard(1, 3, nil)}, "b.json: is shard 1 of 3"},
		{"args", []*ShardFile{shard(0, 2, nil), shard(1, 2, func(f *ShardFile) { f.Args = []string{"--seeds", "5"} })}, "b.json: ran"},
		{"version", []*ShardFile{shard(0, 2, nil), shard(1, 2, func(f *ShardFile) { f.Version = "v2" })}, "b.json: written by retrysim v2"},
		{"input", []*ShardFile{shard(0, 2, func(f *ShardFile) { f.Inputs = []Input{NewInput("--file", "x.yaml", "x.yaml", []byte("a"))} }),
			shard(1, 2, func(f *ShardFile) { f.Inputs = []Input{NewInput("--file", "x.yaml", "x.yaml", []byte("b"))} })}, "b.json: read another x.yaml"},
		{"groups", []*ShardFile{shard(0, 2, nil), shard(1, 2, func(f *ShardFile) { f.Groups[0].Seeds = 5 })}, "b.json: group 1: 5 seeds"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			names := []string{"a.json", "b.json", "c.json"}[:len(tt.files)]
			_, err := MergeShards(names, tt.files)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// shardText runs shard sh of groups and returns its file as Write writes
// it, after edit.
func shardText(t *testing.T, groups []Group, sh Shard, edit func(*ShardFile)) string {
	t.Helper()
	parts, err := RunShard(context.Background(), groups, sh, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := ShardFile{Schema: ShardSchema, Command: "plot", Args: []string{}, Inputs: []Input{}, Shard: sh.Index, Shards: sh.Count, Groups: parts}
	if edit != nil {
		edit(&f)
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// A shard file is untrusted: anything but what retrysim writes is
// refused with a message naming the file, impossible values included
// (even with a checksum that matches them).
func TestReadShardFileRefuses(t *testing.T) {
	s := scenariotest.Builtin(t, "overload-burst")
	bucket := DefaultBucket(s.Server)
	groups := []Group{{Scenario: s, First: s.Seed, Seeds: 3}, {Scenario: s, First: s.Seed, Seeds: 3, Plot: true, Bucket: bucket}}
	good := shardText(t, groups, Shard{0, 2}, nil)
	if _, err := ReadShardFile("x.json", strings.NewReader(good)); err != nil {
		t.Fatal(err)
	}
	metric := func(name string) int {
		return slices.IndexFunc(s.Metrics(), func(m *metrics.Metric) bool { return m.Name == name })
	}
	value := func(v float64) func(*ShardFile) {
		return func(f *ShardFile) { f.Groups[0].Runs[0].Values[0][metric("completed")] = v }
	}
	for _, tt := range []struct {
		name string
		text string
		want string
	}{
		{"not json", `not json`, "x.json: not a retrysim shard file"},
		{"other schema", `{"schema":"retrysim/multi-seed/v1"}`, `x.json: schema "retrysim/multi-seed/v1", want "retrysim/shard/v4"`},
		{"older schema", `{"schema":"retrysim/shard/v1","shard":0,"shards":1}`, `x.json: schema "retrysim/shard/v1" is the shard format of an older retrysim`},
		{"v2", `{"schema":"retrysim/shard/v2","shard":0,"shards":1}`, `x.json: schema "retrysim/shard/v2" is the shard format of an older retrysim`},
		{"unknown field", `{"schema":"retrysim/shard/v4","shard":0,"shards":1,"bogus":1}`, "x.json: json: unknown field"},
		{"truncated", good[:len(good)/2], "x.json: not a retrysim shard file"},
		{"changed value", strings.Replace(good, `"first_seed":1,`, `"first_seed":2,`, 1), "x.json: checksum"},
		{"no checksum", strings.Replace(good, `"checksum":"sha256:`, `"checksum":"`, 1), "x.json: checksum"},
		{"null for 0", strings.Replace(good, `"shard":0,`, `"shard":null,`, 1), "x.json: not in the form retrysim writes"},
		{"trailing data", good + "{}", "x.json: not a retrysim shard file"},
		{"spaces", strings.Replace(good, `,"shards":2`, `, "shards":2`, 1), "x.json: not in the form retrysim writes"},
		{"bad shard", shardText(t, groups, Shard{0, 2}, func(f *ShardFile) { f.Shard = 2 }), "x.json: shard index"},
		{"input", shardText(t, groups, Shard{0, 2}, func(f *ShardFile) {
			f.Inputs = []Input{{Name: "f", SHA256: "00", Content: []byte("a")}}
		}), "x.json: the copy of f"},
		{"negative", shardText(t, groups, Shard{0, 2}, value(-1)), "x.json: group 1 (overload-burst): seed index 0, policy immediate, completed: -1 is not a finite number"},
		{"fraction", shardText(t, groups, Shard{0, 2}, value(2.5)), "completed: 2.5 is not a count"},
		{"huge", shardText(t, groups, Shard{0, 2}, value(1e300)), "completed: 1e+300 is not a count"},
		{"null count", shardText(t, groups, Shard{0, 2}, value(math.NaN())), "completed: null (missing), but the metric always has a value"},
		{"infinite latency", shardText(t, groups, Shard{0, 2}, func(f *ShardFile) { f.Groups[0].Runs[0].Values[0][metric("latency_ms.p50")] = math.Inf(1) }), `latency_ms.p50: "+Inf" is not a finite number`},
		{"unknown metric", shardText(t, groups, Shard{0, 2}, func(f *ShardFile) { f.Groups[0].Metrics[0] = "speed" }), `unknown metric "speed"`},
		{"foreign seed", shardText(t, groups, Shard{0, 2}, func(f *ShardFile) { f.Groups[0].Runs[1].Seed = 1 }), "seed index 1, want 2"},
		{"missing seed", shardText(t, groups, Shard{0, 2}, func(f *ShardFile) { f.Groups[0].Runs = f.Groups[0].Runs[:1] }), "1 seed run(s), but shard 0/2 runs 2 of the group's 3 seeds"},
		{"histogram max", shardText(t, groups, Shard{0, 2}, func(f *ShardFile) { f.Groups[1].Completions[1].Max = 1e18 }), "completions of policy capped-exponential: histogram largest value 1000000000000000000 is not in its last bucket"},
		{"negative timeline count", shardText(t, groups, Shard{1, 2}, func(f *ShardFile) { f.Groups[1].Timelines[0].Admitted[0] = -5 }), `timeline of "immediate": bucket 0 counts -5`},
		{"more wasted than admitted", shardText(t, groups, Shard{1, 2}, func(f *ShardFile) {
			tl := &f.Groups[1].Timelines[0]
			tl.Wasted[0] = tl.Admitted[0] + 1
		}), `timeline of "immediate": bucket 0 wastes`},
		{"no wasted series", shardText(t, groups, Shard{1, 2}, func(f *ShardFile) { f.Groups[1].Timelines[0].Wasted = nil }), `timeline of "immediate": series of`},
		{"timelines elsewhere", shardText(t, groups, Shard{0, 2}, func(f *ShardFile) { f.Groups[1].Timelines = make([]Timeline, len(f.Groups[1].Policies)) }), "timelines, but the shard does not run the group's first seed"},
		{"plot data without plots", shardText(t, groups, Shard{0, 2}, func(f *ShardFile) { f.Groups[0].Bucket = time.Second }), "plot data in a group without plots"},
		// Buckets of 1 ns and 9e18 ns: doubling the first one to reach the
		// second overflowed to 0, and the merge spun for ever.
		{"bucket not a doubling", shardText(t, groups, Shard{1, 2}, func(f *ShardFile) {
			f.Groups[1].Bucket = 1
			f.Groups[1].Timelines[0].Bucket = 1
			f.Groups[1].Timelines[1].Bucket = 9e18
		}), `bucket 9000000000000000000 ns, want 1 ns doubled 0 or more times`},
		{"too many buckets", shardText(t, groups, Shard{1, 2}, func(f *ShardFile) {
			tl := &f.Groups[1].Timelines[0]
			for _, s := range append(tl.counts()[:len(tl.counts())-1], &tl.InFlight) {
				*s = make([]int, MaxTimelineBuckets+1)
			}
		}), "1001 buckets"},
		{"past the largest time", shardText(t, groups, Shard{1, 2}, func(f *ShardFile) { f.Groups[1].Timelines[0].Bucket = bucket << 33 }), "over 1000 buckets or the largest time"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadShardFile("x.json", strings.NewReader(tt.text))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// A shard file is read up to MaxShardFileSize bytes, from a regular file
// only: /dev/zero ran out of memory, a FIFO waited for ever.
func TestLoadShardFileBounded(t *testing.T) {
	defer func(limit int) { shardFileLimit = limit }(shardFileLimit)
	shardFileLimit = 1 << 20
	if _, err := ReadShardFile("zero", zeros{}); err == nil || !strings.Contains(err.Error(), "zero: larger than 128 MiB") {
		t.Errorf("endless input: %v", err)
	}
	dir := t.TempDir()
	for _, path := range []string{"/dev/zero", dir} {
		if _, err := LoadShardFile(path); err == nil || !strings.Contains(err.Error(), path+": not a regular file") {
			t.Errorf("%s: %v", path, err)
		}
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	if _, err := LoadShardFile(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file (a shard file is a file, not a named pipe)") {
		t.Errorf("FIFO: %v", err)
	}
}

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
}
