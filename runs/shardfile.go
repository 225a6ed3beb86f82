package runs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/stats"
)

// ShardSchema names the JSON schema of a shard's partial result.
// docs/scale.md describes it; a change to it gets a new version.
const ShardSchema = "retrysim/shard/v4"

// oldShardSchemas are the schemas of earlier builds, refused by name.
var oldShardSchemas = []string{"retrysim/shard/v1", "retrysim/shard/v2", "retrysim/shard/v3"}

// MaxShardFileSize bounds the size of a shard file that is read (and
// written): a shard over it should be split into more shards.
const MaxShardFileSize = 128 << 20

// shardFileLimit is MaxShardFileSize, lowered by tests.
var shardFileLimit = MaxShardFileSize

// maxExactCount bounds the counts of a shard file (metric values of unit
// Count, timeline counts): whole numbers a float64 holds exactly.
const maxExactCount = metrics.MaxExactCount

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
	// Flags are the values the command read of each of its flags (less
	// those Args leaves out), in the command's flag order: what the merge
	// plans the command's work from.
	Flags  []Flag `json:"flags"`
	Shard  int    `json:"shard"`
	Shards int    `json:"shards"`
	// Inputs are the files the command read (the scenario file, the
	// baselines), with their bytes, so that the merge needs no copy.
	Inputs []Input `json:"inputs"`
	// Groups has one entry per group of the command's work, in order,
	// holding what this shard ran of it.
	Groups []GroupPart `json:"groups"`
	// Checksum is "sha256:" and the hex SHA-256 of the file's canonical
	// JSON (as Write writes it) with Checksum empty; Write sets it.
	Checksum string `json:"checksum"`
}

// Flag is the value a command read of one of its flags.
type Flag struct {
	Name string `json:"name"`
	// Set says the flag was given; if not, Value is its default.
	Set bool `json:"set"`
	// Value is the flag's value in JSON, as its type has it: a string, a
	// list of strings, a boolean, a whole number or (a duration) a whole
	// number of nanoseconds.
	Value json.RawMessage `json:"value"`
}

// TraceInput is the Flag of an Input that is a capacity trace, named by
// a scenario's trace field.
const TraceInput = "trace"

// Input is a file a command read.
type Input struct {
	// Flag is the flag that named it ("--file", "--baseline"), or
	// TraceInput for a capacity trace a scenario file names.
	Flag string `json:"flag"`
	// Path is the flag's value ("" for the built-in scenarios), or a
	// trace's path as read: joined to the scenario file's folder.
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
	if data == nil {
		data = []byte{} // "", not null
	}
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

// Write writes the file as JSON, with its checksum.
func (f *ShardFile) Write(w io.Writer) error {
	data, err := f.encode()
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// encode returns the file as Write writes it: canonical JSON, one line,
// with its checksum.
func (f *ShardFile) encode() ([]byte, error) {
	sum, err := f.checksum()
	if err != nil {
		return nil, err
	}
	c := *f
	c.Checksum = sum
	var buf bytes.Buffer
	err = json.NewEncoder(&buf).Encode(&c)
	return buf.Bytes(), err
}

// checksum returns the checksum f should carry.
func (f *ShardFile) checksum() (string, error) {
	c := *f
	c.Checksum = ""
	data, err := json.Marshal(&c)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// LoadShardFile reads the shard file at path: a regular file (not a
// device, a FIFO or a directory) of at most MaxShardFileSize bytes.
func LoadShardFile(path string) (*ShardFile, error) {
	regular := func(fi os.FileInfo) error {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file (a shard file is a file, not a %s)", path, kind(fi.Mode()))
		}
		return nil
	}
	// Stat first: opening a FIFO would wait for a writer.
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(fi); err != nil {
		return nil, err
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if fi, err = fh.Stat(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := regular(fi); err != nil {
		return nil, err
	}
	return ReadShardFile(path, fh)
}

// kind names a file's type for messages.
func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// ReadShardFile reads a shard file of at most MaxShardFileSize bytes,
// checks its checksum and every value, and returns it; name is used in
// messages.
func ReadShardFile(name string, r io.Reader) (*ShardFile, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(shardFileLimit)+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > shardFileLimit {
		return nil, fmt.Errorf("%s: larger than %d MiB, the limit of a shard file (split the work into more shards)", name, MaxShardFileSize>>20)
	}
	return readShardFile(name, data, true)
}

// readShardFile is ReadShardFile on the file's bytes; verify false skips
// the checksum (for the fuzz test, whose changes would all fail it).
func readShardFile(name string, data []byte, verify bool) (*ShardFile, error) {
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: not a retrysim shard file (%v)", name, err)
	}
	switch {
	case slices.Contains(oldShardSchemas, head.Schema):
		return nil, fmt.Errorf("%s: schema %q is the shard format of an older retrysim; this one reads %q: run the shards again with this build", name, head.Schema, ShardSchema)
	case head.Schema != ShardSchema:
		return nil, fmt.Errorf("%s: schema %q, want %q (written by another version of retrysim, or not a shard file)", name, head.Schema, ShardSchema)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f ShardFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if verify {
		// The checksum catches changed values; the comparison with what
		// Write writes, any other change (a null for a 0, spaces).
		want, err := f.checksum()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if f.Checksum != want {
			return nil, fmt.Errorf("%s: checksum %q does not match the contents (%s): the file is damaged or was edited", name, f.Checksum, want)
		}
		if canon, err := f.encode(); err != nil || !bytes.Equal(canon, data) {
			return nil, fmt.Errorf("%s: not in the form retrysim writes (edited, or rewritten by another tool)", name)
		}
	}
	if err := f.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &f, nil
}

// check says what is wrong with a shard file's values.
func (f *ShardFile) check() error {
	sh := Shard{f.Shard, f.Shards}
	if err := sh.Validate(); err != nil {
		return err
	}
	if f.Command == "" {
		return errors.New("no command")
	}
	for i, fl := range f.Flags {
		if fl.Name == "" || slices.ContainsFunc(f.Flags[:i], func(o Flag) bool { return o.Name == fl.Name }) {
			return fmt.Errorf("flag %d: no name, or one given twice (%q)", i+1, fl.Name)
		}
	}
	for _, in := range f.Inputs {
		if sum := sha256.Sum256(in.Content); hex.EncodeToString(sum[:]) != in.SHA256 {
			return fmt.Errorf("the copy of %s does not have the sha256 recorded for it", in.Name)
		}
	}
	unit := 0
	for g := range f.Groups {
		part := &f.Groups[g]
		if part.Seeds < 0 || part.Seeds > math.MaxInt32 || unit > math.MaxInt-part.Seeds {
			return fmt.Errorf("group %d: %d seeds", g+1, part.Seeds)
		}
		if err := part.check(sh, unit); err != nil {
			return fmt.Errorf("group %d (%s): %w", g+1, part.Scenario, err)
		}
		unit += part.Seeds
	}
	return nil
}

// check says what is wrong with what shard sh ran of a group whose
// seeds are the units from unit on (see Shard).
func (part *GroupPart) check(sh Shard, unit int) error {
	ms := make([]*metrics.Metric, len(part.Metrics))
	for i, name := range part.Metrics {
		m, ok := metrics.Lookup(name)
		if !ok {
			return fmt.Errorf("unknown metric %q", name)
		}
		ms[i] = m
	}
	// The shard runs seed s when (unit+s) mod Count = Index.
	first := ((sh.Index-unit)%sh.Count + sh.Count) % sh.Count
	owned := 0
	if first < part.Seeds {
		owned = (part.Seeds-first-1)/sh.Count + 1
	}
	if len(part.Runs) != owned {
		return fmt.Errorf("%d seed run(s), but shard %s runs %d of the group's %d seeds", len(part.Runs), sh, owned, part.Seeds)
	}
	for i, run := range part.Runs {
		if want := first + i*sh.Count; run.Seed != want {
			return fmt.Errorf("seed index %d, want %d (the shard's seeds in ascending order)", run.Seed, want)
		}
		if len(run.Values) != len(part.Policies) {
			return fmt.Errorf("seed index %d: %d policies, want %d", run.Seed, len(run.Values), len(part.Policies))
		}
		for p, values := range run.Values {
			if len(values) != len(ms) {
				return fmt.Errorf("seed index %d: %d metric values, want %d", run.Seed, len(values), len(ms))
			}
			for x, v := range values {
				if msg := ms[x].Impossible(v); msg != "" {
					text, _ := Floats{v}.MarshalJSON()
					return fmt.Errorf("seed index %d, policy %s, %s: %s %s", run.Seed, part.Policies[p], ms[x].Name, text[1:len(text)-1], msg)
				}
			}
		}
	}
	if !part.Plot {
		if part.Bucket != 0 || part.Timelines != nil || part.Completions != nil {
			return errors.New("plot data in a group without plots")
		}
		return nil
	}
	if part.Bucket <= 0 {
		return fmt.Errorf("timeline bucket %d ns, want > 0", part.Bucket)
	}
	if len(part.Completions) != len(part.Policies) {
		return fmt.Errorf("%d completion histograms, want one per policy (%d)", len(part.Completions), len(part.Policies))
	}
	for p, c := range part.Completions {
		if err := new(stats.Histogram).AddCounts(c); err != nil {
			return fmt.Errorf("completions of policy %s: %w", part.Policies[p], err)
		}
	}
	// The timelines come with the group's first seed.
	if hasFirst := owned > 0 && first == 0; hasFirst != (part.Timelines != nil) {
		if hasFirst {
			return errors.New("no timelines, but the shard runs the group's first seed")
		}
		return errors.New("timelines, but the shard does not run the group's first seed")
	}
	if part.Timelines != nil && len(part.Timelines) != len(part.Policies) {
		return fmt.Errorf("%d timelines, want one per policy (%d)", len(part.Timelines), len(part.Policies))
	}
	for p := range part.Timelines {
		t := &part.Timelines[p]
		if t.Policy != part.Policies[p] {
			return fmt.Errorf("timeline %d is of policy %q, want %q", p+1, t.Policy, part.Policies[p])
		}
		if err := t.check(part.Bucket); err != nil {
			return err
		}
	}
	return nil
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
		case f.Command != ref.Command || !slices.Equal(f.Args, ref.Args) || !sameFlags(f.Flags, ref.Flags):
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

// sameFlags reports whether a and b hold the same flags and values.
func sameFlags(a, b []Flag) bool {
	return slices.EqualFunc(a, b, func(x, y Flag) bool {
		return x.Name == y.Name && x.Set == y.Set && bytes.Equal(x.Value, y.Value)
	})
}
