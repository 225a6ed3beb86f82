package runs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/retrysim/retrysim/stats"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ShardSchema names the JSON schema of a shard's partial result.
// docs/scale.md describes it; a change to it gets a new version.
const ShardSchema = "retrysim/shard/v1"

// ShardFile is the partial result one shard writes: enough to check that
// the shards belong together and to merge them into what the unsharded
// command prints, with every metric value exact.
type ShardFile struct {
	Schema string `json:"schema"`
	// Version identifies the retrysim build (version and VCS commit);
	// shards of different builds are not merged.
	Version string `json:"retrysim_version"`
	// Go is the Go version and platform of the build, for the record.
	Go string `json:"go"`
	// Command and Args are the command that ran and its flags, canonical
	// (every flag given, by its long name, in the command's flag order),
	// less the flags that only choose the shard or print progress.
	Command string   `json:"command"`
	Args    []string `json:"args"`
	Shard   int      `json:"shard"`
	Shards  int      `json:"shards"`
	// Inputs are the files the command read (the scenario file, the
	// baselines), with their bytes, so that the merge needs no copy.
	Inputs []Input `json:"inputs"`
	// Groups has one entry per group of the command's work, in order,
	// holding what this shard ran of it.
	Groups []GroupPart `json:"groups"`
}

// Input is a file a command read.
type Input struct {
	// Flag is the flag that named it ("--file", "--baseline").
	Flag string `json:"flag"`
	// Path is the flag's value; "" for the built-in scenarios.
	Path string `json:"path"`
	// Name is how messages name it: the path, or "scenarios.yaml (built
	// in)", or "<stdin>".
	Name string `json:"name"`
	// SHA256 is the hex SHA-256 of Content.
	SHA256 string `json:"sha256"`
	// Content is the file's bytes (base64 in the JSON).
	Content []byte `json:"content"`
}

// NewInput describes a file read through flag (path as given, "" for the
// built-in scenarios), named name in messages, whose bytes are data.
func NewInput(flag, path, name string, data []byte) Input {
	sum := sha256.Sum256(data)
	return Input{Flag: flag, Path: path, Name: name, SHA256: hex.EncodeToString(sum[:]), Content: data}
}

// GroupPart is what one shard ran of one group (see Shard).
type GroupPart struct {
	Scenario  string   `json:"scenario"`
	Label     string   `json:"point,omitempty"`
	FirstSeed uint64   `json:"first_seed"`
	Seeds     int      `json:"seeds"`
	Policies  []string `json:"policies"`
	// Metrics names the metrics of each run's values, in order.
	Metrics []string `json:"metrics"`
	// Plot is set when the group carries plot data: latency histograms and
	// timelines; Bucket is the timeline bucket asked for, in nanoseconds.
	Plot   bool          `json:"plot"`
	Bucket time.Duration `json:"bucket_ns,omitempty"`
	// Runs are the shard's seeds of the group, in ascending order.
	Runs []SeedRun `json:"runs"`
	// Timelines, one per policy, come with the group's first seed.
	Timelines []Timeline `json:"timelines,omitempty"`
	// Completions[p] count policy p's completion latencies (nanoseconds)
	// over the shard's seeds, in plot groups: histograms add up exactly.
	Completions []stats.HistogramCounts `json:"completions,omitempty"`
}

// SeedRun is every policy's metrics on one seed.
type SeedRun struct {
	// Seed is the seed's index: the seed is the group's FirstSeed + Seed.
	Seed int `json:"seed"`
	// Values[p] are policy p's metric values, unrounded; null where a
	// metric does not exist.
	Values []Floats `json:"values"`
}

// Floats are float64 values written exactly: the shortest decimal that
// reads back as the same float64, null for NaN, "+Inf" and "-Inf" for the
// infinities.
type Floats []float64

// MarshalJSON writes the values.
func (f Floats) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	for i, v := range f {
		if i > 0 {
			b = append(b, ',')
		}
		switch {
		case math.IsNaN(v):
			b = append(b, "null"...)
		case math.IsInf(v, 1):
			b = append(b, `"+Inf"`...)
		case math.IsInf(v, -1):
			b = append(b, `"-Inf"`...)
		default:
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		}
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (f *Floats) UnmarshalJSON(data []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	out := make(Floats, len(raw))
	for i, r := range raw {
		switch s := string(r); s {
		case "null":
			out[i] = math.NaN()
		case `"+Inf"`:
			out[i] = math.Inf(1)
		case `"-Inf"`:
			out[i] = math.Inf(-1)
		default:
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return fmt.Errorf("metric value %s is not a number", s)
			}
			out[i] = v
		}
	}
	*f = out
	return nil
}

// Write writes the file as JSON.
func (f *ShardFile) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	return enc.Encode(f)
}

// ReadShardFile reads a shard file; name is used in messages.
func ReadShardFile(name string, r io.Reader) (*ShardFile, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: not a retrysim shard file (%v)", name, err)
	}
	if head.Schema != ShardSchema {
		return nil, fmt.Errorf("%s: schema %q, want %q (written by another version of retrysim, or not a shard file)", name, head.Schema, ShardSchema)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f ShardFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if err := (Shard{f.Shard, f.Shards}).Validate(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	for _, in := range f.Inputs {
		if sum := sha256.Sum256(in.Content); hex.EncodeToString(sum[:]) != in.SHA256 {
			return nil, fmt.Errorf("%s: the copy of %s does not have the sha256 recorded for it", name, in.Name)
		}
	}
	return &f, nil
}

// ShardError is a problem with one shard file among those merged.
type ShardError struct {
	File string
	Err  error
}

func (e *ShardError) Error() string { return e.File + ": " + e.Err.Error() }
func (e *ShardError) Unwrap() error { return e.Err }

// MergeShards checks that files (named by names, for messages) are every
// shard of one command, each once, and merges their runs. The first file
// is the reference the others must agree with: same schema, build,
// command and flags, input files, number of shards and groups.
func MergeShards(names []string, files []*ShardFile) (*Merged, error) {
	if len(files) == 0 {
		return nil, errNoShards
	}
	ref := files[0]
	byIndex := make([]int, ref.Shards)
	for i := range byIndex {
		byIndex[i] = -1
	}
	for i, f := range files {
		bad := func(format string, args ...any) error {
			return &ShardError{names[i], fmt.Errorf(format, args...)}
		}
		switch {
		case f.Version != ref.Version:
			return nil, bad("written by retrysim %s, but %s by %s", f.Version, names[0], ref.Version)
		case f.Command != ref.Command || !slices.Equal(f.Args, ref.Args):
			return nil, bad("ran %q, but %s ran %q", commandLine(f), names[0], commandLine(ref))
		case f.Shards != ref.Shards:
			return nil, bad("is shard %d of %d, but %s is one of %d", f.Shard, f.Shards, names[0], ref.Shards)
		case len(f.Groups) != len(ref.Groups):
			return nil, bad("has %d groups of runs, but %s has %d", len(f.Groups), names[0], len(ref.Groups))
		}
		if d := inputsDiffer(f.Inputs, ref.Inputs); d != "" {
			return nil, bad("%s than %s", d, names[0])
		}
		for g := range f.Groups {
			want := ref.Groups[g]
			if d := f.Groups[g].differs(&want); d != "" {
				return nil, bad("group %d: %s as in %s", g+1, d, names[0])
			}
		}
		if j := byIndex[f.Shard]; j >= 0 {
			return nil, bad("is shard %d/%d again: %s is the same shard", f.Shard, f.Shards, names[j])
		}
		byIndex[f.Shard] = i
	}
	var missing []string
	for i, j := range byIndex {
		if j < 0 {
			missing = append(missing, fmt.Sprintf("%d/%d", i, ref.Shards))
		}
	}
	if len(missing) > 0 {
		if len(missing) > 10 {
			missing = append(missing[:10], fmt.Sprintf("and %d more", len(missing)-10))
		}
		return nil, fmt.Errorf("missing shard(s) %s of %q: %d of %d given (%s)", strings.Join(missing, ", "), commandLine(ref), len(files), ref.Shards, given(names))
	}
	m := &Merged{parts: make([][]GroupPart, len(ref.Groups))}
	for g := range m.parts {
		for _, i := range byIndex {
			m.parts[g] = append(m.parts[g], files[i].Groups[g])
		}
	}
	return m, nil
}

// given lists file names for a message, the first few of them.
func given(names []string) string {
	if len(names) > 5 {
		return strings.Join(names[:5], ", ") + fmt.Sprintf(" and %d more", len(names)-5)
	}
	return strings.Join(names, ", ")
}

// commandLine is the command a shard ran, for messages.
func commandLine(f *ShardFile) string {
	return strings.Join(append([]string{"retrysim", f.Command}, f.Args...), " ")
}

// inputsDiffer says how the input files a differ from b, or "".
func inputsDiffer(a, b []Input) string {
	if len(a) != len(b) {
		return fmt.Sprintf("read %d input file(s), not %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Flag != b[i].Flag || a[i].Path != b[i].Path {
			return fmt.Sprintf("read %s %q, not %s %q,", a[i].Flag, a[i].Path, b[i].Flag, b[i].Path)
		}
		if a[i].SHA256 != b[i].SHA256 {
			return fmt.Sprintf("read another %s (sha256 %.12s…, not %.12s…)", a[i].Name, a[i].SHA256, b[i].SHA256)
		}
	}
	return ""
}
