package runs

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/retrysim/retrysim/internal/scenariotest"
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
			gotSweep, err := m.Sweep(2, s, ps, s.Seed, 2)
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

func TestReadShardFileRefuses(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{`not json`, "x.json: not a retrysim shard file"},
		{`{"schema":"retrysim/multi-seed/v1"}`, `x.json: schema "retrysim/multi-seed/v1"`},
		{`{"schema":"retrysim/shard/v1","shard":3,"shards":3}`, "x.json: shard index"},
		{`{"schema":"retrysim/shard/v1","shard":0,"shards":1,"bogus":1}`, "x.json: json: unknown field"},
		{`{"schema":"retrysim/shard/v1","shard":0,"shards":1,"inputs":[{"name":"f","sha256":"00","content":"YQ=="}]}`, "x.json: the copy of f"},
	} {
		_, err := ReadShardFile("x.json", strings.NewReader(tt.text))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.text, err, tt.want)
		}
	}
}
