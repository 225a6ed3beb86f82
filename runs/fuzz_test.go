package runs_test

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/report/plot"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
)

// A shard file is untrusted input. Whatever its bytes, reading it,
// merging it and making the plots and timelines of its plot data gives
// an error or a result: no panic, no endless loop. A file that passes
// the checks and is written again reads back.
func FuzzShardFile(f *testing.F) {
	builtin, err := scenarios.Builtin()
	if err != nil {
		f.Fatal(err)
	}
	// The seeds are real shard files: a plot's and a compare's runs, as
	// 'retrysim plot --shard 0/1' and 'compare --shard 0/1' write them.
	// The metastable storm's timelines count wasted work.
	s := scenariotest.Builtin(f, "overload-burst")
	storm := scenariotest.Builtin(f, "metastable-retry-storm")
	for _, groups := range [][]runs.Group{
		{{Scenario: s, First: s.Seed, Seeds: 2, Plot: true, Bucket: runs.DefaultBucket(s.Server)}},
		{{Scenario: s, First: 7, Seeds: 3}, {Scenario: s, First: 7, Seeds: 1, Plot: true, Bucket: 250e6}},
		{{Scenario: storm, First: storm.Seed, Seeds: 1, Plot: true, Bucket: runs.DefaultBucket(storm.Server)}},
	} {
		parts, err := runs.RunShard(context.Background(), groups, runs.Shard{Index: 0, Count: 1}, nil)
		if err != nil {
			f.Fatal(err)
		}
		file := runs.ShardFile{Schema: runs.ShardSchema, Version: "devel unknown", Go: "go1.26 linux/amd64",
			Command: "plot", Args: []string{"--seeds", "2"}, Shards: 1, Inputs: []runs.Input{}, Groups: parts,
			Flags: []runs.Flag{{Name: "seeds", Set: true, Value: []byte("2")}, {Name: "plot-format", Value: []byte(`"png,svg"`)}}}
		var buf bytes.Buffer
		if err := file.Write(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		runs.ReadShardFile("f.json", bytes.NewReader(data))
		file, err := runs.ReadShardBytes("f.json", data, false)
		if err != nil {
			return
		}
		var again bytes.Buffer
		if err := file.Write(&again); err != nil {
			t.Fatalf("a file read cannot be written: %v", err)
		}
		if _, err := runs.ReadShardFile("f.json", &again); err != nil {
			t.Fatalf("a file read and written again is refused: %v", err)
		}
		merged, err := runs.MergeShards([]string{"f.json"}, []*runs.ShardFile{file})
		if err != nil {
			return
		}
		for g, part := range file.Groups {
			sc, err := builtin.Lookup(part.Scenario)
			if err != nil || part.Seeds > 100 {
				return
			}
			gr := runs.Group{Scenario: sc, First: part.FirstSeed, Seeds: part.Seeds, Label: part.Label, Plot: part.Plot, Bucket: part.Bucket}
			if !part.Plot {
				merged.MultiSeed(g, gr)
				continue
			}
			d, err := merged.PlotData(g, gr)
			if err != nil {
				continue
			}
			report.WriteTimelineJSON(io.Discard, d)
			report.WriteTimelineCSV(io.Discard, d)
			plot.SVGFigures(d)
		}
	})
}
