package runs_test

import (
	"bytes"
	"context"
	"io"
	"math"
	"slices"
	"testing"

	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/report/plot"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
)

// A shard file is untrusted input. Whatever its bytes, reading it,
// merging it and making the plots and timelines of its plot data gives
// an error or a result: no panic, no endless loop. A file that passes
// the checks and is written again reads back.
//
// The fuzzed file is one of the real files below with two splices: at
// byte at (modulo the length), cut bytes are replaced by put. A cut of
// the whole file makes put any file at all; the fuzzer mostly changes a
// real file in one or two places, whose checks are deep. The file is not
// fuzzed as one []byte because the fuzzer minimises each input that
// finds new coverage by trying to remove every range of its bytes: for a
// file of a kilobyte and more that is a million executions, which took
// the whole minute of fuzzing, while put is a few bytes.
func FuzzShardFile(f *testing.F) {
	small, err := scenarios.Parse("small.yaml", []byte(smallScenarios))
	if err != nil {
		f.Fatal(err)
	}
	// The seeds are real shard files: a plot's and a compare's runs, as
	// 'retrysim plot --shard 0/1' and 'compare --shard 0/1' write them.
	// The storm's timelines count wasted work. The scenarios are small,
	// so that each execution takes milliseconds and the fuzzer explores
	// rather than minimising large files.
	s, err := small.Lookup("burst")
	if err != nil {
		f.Fatal(err)
	}
	storm, err := small.Lookup("storm")
	if err != nil {
		f.Fatal(err)
	}
	var files [][]byte
	for _, groups := range [][]runs.Group{
		{{Scenario: s, First: s.Seed, Seeds: 2, Plot: true, Bucket: runs.DefaultBucket(s.Server)}},
		{{Scenario: s, First: 7, Seeds: 3}, {Scenario: s, First: 7, Seeds: 1, Plot: true, Bucket: 250e6}},
		{{Scenario: storm, First: storm.Seed, Seeds: 1, Plot: true, Bucket: runs.DefaultBucket(storm.Server)}},
	} {
		parts, err := runs.RunShard(context.Background(), groups, runs.Shard{Index: 0, Count: 1}, nil)
		if err != nil {
			f.Fatal(err)
		}
		if groups[0].Scenario == storm && !wastesWork(parts[0]) {
			f.Fatal("the storm's seed wastes no work")
		}
		file := runs.ShardFile{Schema: runs.ShardSchema, Version: "devel unknown", Go: "go1.26 linux/amd64",
			Command: "plot", Args: []string{"--seeds", "2"}, Shards: 1, Inputs: []runs.Input{}, Groups: parts,
			Flags: []runs.Flag{{Name: "seeds", Set: true, Value: []byte("2")}, {Name: "plot-format", Value: []byte(`"png,svg"`)}}}
		var buf bytes.Buffer
		if err := file.Write(&buf); err != nil {
			f.Fatal(err)
		}
		files = append(files, buf.Bytes())
		f.Add(uint8(len(files)-1), uint16(0), uint16(0), []byte{}, uint16(0), uint16(0), []byte{})
	}
	f.Add(uint8(0), uint16(200), uint16(1), []byte("9"), uint16(300), uint16(1), []byte("-"))
	f.Add(uint8(0), uint16(0), uint16(math.MaxUint16), []byte(`{"schema":"`+runs.ShardSchema+`","groups":[{}]}`), uint16(0), uint16(0), []byte{})
	f.Fuzz(func(t *testing.T, file uint8, at1, cut1 uint16, put1 []byte, at2, cut2 uint16, put2 []byte) {
		data := splice(splice(files[int(file)%len(files)], at1, cut1, put1), at2, cut2, put2)
		runs.ReadShardFile("f.json", bytes.NewReader(data))
		read, err := runs.ReadShardBytes("f.json", data, false)
		if err != nil {
			return
		}
		var again bytes.Buffer
		if err := read.Write(&again); err != nil {
			t.Fatalf("a file read cannot be written: %v", err)
		}
		if _, err := runs.ReadShardFile("f.json", &again); err != nil {
			t.Fatalf("a file read and written again is refused: %v", err)
		}
		merged, err := runs.MergeShards([]string{"f.json"}, []*runs.ShardFile{read})
		if err != nil {
			return
		}
		for g, part := range read.Groups {
			sc, err := small.Lookup(part.Scenario)
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

// splice returns a copy of data with the cut bytes from at (modulo
// len(data)+1) replaced by put; cut stops at the end of data.
func splice(data []byte, at, cut uint16, put []byte) []byte {
	i := int(at) % (len(data) + 1)
	j := i + min(int(cut), len(data)-i)
	return slices.Concat(data[:i], put, data[j:])
}

// wastesWork reports whether a group's timelines count wasted work.
func wastesWork(part runs.GroupPart) bool {
	for _, tl := range part.Timelines {
		for _, n := range tl.Wasted {
			if n > 0 {
				return true
			}
		}
	}
	return false
}

// smallScenarios are FuzzShardFile's: a burst against a server that
// admits a few per window, as overload-burst, and an open-loop storm on a
// queue whose capacity halves, as metastable-retry-storm, whose attempts
// time out while the server works on (wasted work); a few clients for a
// few seconds each.
const smallScenarios = `scenarios:
  - name: burst
    seed: 1
    server:
      response_time: 100ms
      phases:
        - {duration: 1s, reject: overloaded}
        - {admit: 2, window: 1s, reject: overloaded}
    clients: {count: 3, max_attempts: 3, deadline: 3s}
    policies:
      - {name: capped-exponential, base: 500ms, cap: 2s}
  - name: storm
    seed: 1
    incident: {start: 1s, end: 2s}
    server:
      type: queue
      phases:
        - {duration: 1s, concurrency: 2}
        - {duration: 1s, concurrency: 1}
        - {concurrency: 2}
      service: {exponential: 100ms}
    clients: {type: open-loop, rate: 20, until: 3s, max_attempts: 3}
    policies:
      - {name: immediate, attempt_timeout: 200ms}
`
