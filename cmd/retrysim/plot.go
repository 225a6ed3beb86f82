package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/internal/suggest"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/report/plot"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
)

func plotCommand() *cli.Command {
	return &cli.Command{
		Name:  "plot",
		Usage: "draw timeline, load, completion CDF, outcomes, distributions",
		UsageText: "retrysim plot --plot-dir DIR [--scenario NAME | --file PATH] [--seed N]\n" +
			"              [--seeds K] [--plot-format png,svg] [--bucket DURATION]\n" +
			"              [--param NAME=VALUE]... [--force]\n\n" +
			"Writes DIR/timeline, DIR/load, DIR/cdf, DIR/outcomes, with\n" +
			"priorities DIR/priorities (outcomes by priority), with\n" +
			"--seeds K > 1 DIR/distributions, and for a pool DIR/members (each\n" +
			"member's requests and failures), each as .png and .svg (1200×800).\n" +
			"The timeline (admitted and rejected) and load (offered load, goodput\n" +
			"and in flight against capacity) show the first seed; the CDF pools\n" +
			"every seed. --plot-format may also list json and csv: DIR/timeline.json\n" +
			"and DIR/timeline.csv, the numbers behind both (docs/output.md).\n\n" +
			"Examples:\n" +
			"   retrysim plot --plot-dir plots\n" +
			"   retrysim plot --plot-dir plots --scenario long-outage --seeds 100 \\\n" +
			"      --plot-format svg",
		Flags: append(scenarioFlags(), append(append(plotFlags("directory `DIR` to write the plots to (created if missing)"),
			// Old names, before the vocabulary was made one across commands.
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Hidden: true},
			&cli.StringFlag{Name: "format", Hidden: true},
			&cli.DurationFlag{Name: "bucket", HideDefault: true, Usage: "timeline bucket `DURATION` (default: the server's admission window or time scale, else 1s)"},
			setParamFlag(),
		), shardFlags()...)...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return usagef("plot takes no arguments, got %q", cmd.Args().Slice())
			}
			return execute(ctx, newCall(cmd), plotJob)
		},
	}
}

// plotJob is plot's job: the plot data of the scenario, drawn into
// --plot-dir.
func plotJob(c *call) (job, error) {
	dir, dirFlag, err := flagOrOldName(c, "plot-dir", "out")
	if err != nil {
		return job{}, err
	}
	if dir == "" {
		return job{}, usagef("plot needs --plot-dir DIR: where to write the images")
	}
	formats, data, err := plotAndDataFormats(c, "format")
	if err != nil {
		return job{}, err
	}
	s, first, k, err := pickScenario(c)
	if err != nil {
		return job{}, err
	}
	if s, err = setParams(c, s); err != nil {
		return job{}, err
	}
	bucket, err := bucketFlag(c, s)
	if err != nil {
		return job{}, err
	}
	return job{
		plan:  runs.Plan{Groups: []runs.Group{{Scenario: s, First: first, Seeds: k, Plot: true, Bucket: bucket}}},
		title: fmt.Sprintf("%s: %d seeds", s.Name, k),
		start: func() (func(), error) { return nil, outputDir(dirFlag, dir) },
		present: func(res *runs.Results) error {
			pd := res.Groups[0].Plot
			figs, err := plot.Figures(pd)
			if err != nil {
				return err
			}
			files, err := figureFiles(dir, figs, formats)
			if err != nil {
				return err
			}
			more, err := timelineFiles(dir, pd, data)
			if err != nil {
				return err
			}
			return writeOutputs(c, append(files, more...))
		},
	}, nil
}

// plotFlags are --plot-dir and --plot-format, the flags of every command
// that draws images. dirUsage describes --plot-dir.
func plotFlags(dirUsage string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "plot-dir", Usage: dirUsage},
		&cli.StringFlag{Name: "plot-format", Value: "png,svg", Usage: "comma-separated image `FORMATS`: png, svg"},
	}
}

// flagOrOldName returns the value of the string flag name or of one of its
// hidden old names, and the name it was given as ("--out"), for messages.
// Giving two names of the same flag is a usage error.
func flagOrOldName(c *call, name string, old ...string) (value, given string, err error) {
	value, given = c.String(name), "--"+name
	set := ""
	for _, n := range append([]string{name}, old...) {
		if !c.IsSet(n) {
			continue
		}
		if set != "" {
			return "", "", usagef("--%s and --%s are the same flag; give one of them", set, n)
		}
		set, value, given = n, c.String(n), "--"+n
	}
	return value, given, nil
}

// plotFormatsFlag parses --plot-format (or its hidden old name, if any).
func plotFormatsFlag(c *call, old ...string) ([]plot.ImageFormat, error) {
	list, given, err := flagOrOldName(c, "plot-format", old...)
	if err != nil {
		return nil, err
	}
	return plotFormats(given, list)
}

// dataFormats are the formats of timeline data plot's --plot-format takes
// besides the image formats.
var dataFormats = []string{"json", "csv"}

// plotAndDataFormats parses plot's --plot-format (or its hidden old name):
// image formats, and data formats of the timelines (json, csv).
func plotAndDataFormats(c *call, old ...string) ([]plot.ImageFormat, []string, error) {
	list, given, err := flagOrOldName(c, "plot-format", old...)
	if err != nil {
		return nil, nil, err
	}
	var images, data []string
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); slices.Contains(dataFormats, f) {
			if !slices.Contains(data, f) {
				data = append(data, f)
			}
			continue
		}
		images = append(images, f)
	}
	if len(images) == 0 {
		return nil, data, nil
	}
	formats, err := plotFormats(given, strings.Join(images, ","), dataFormats...)
	return formats, data, err
}

// timelineFiles are d's timelines as dir/timeline.json and/or
// dir/timeline.csv.
func timelineFiles(dir string, d *runs.PlotData, formats []string) ([]outputFile, error) {
	var files []outputFile
	for _, f := range formats {
		var buf bytes.Buffer
		var err error
		if f == "json" {
			err = report.WriteTimelineJSON(&buf, d)
		} else {
			err = report.WriteTimelineCSV(&buf, d)
		}
		if err != nil {
			return nil, err
		}
		files = append(files, outputFile{filepath.Join(dir, "timeline."+f), buf.Bytes()})
	}
	return files, nil
}

// plotFormats parses a comma-separated list of image formats, given as
// flag; also are the other formats the flag takes, for the message.
func plotFormats(flag, list string, also ...string) ([]plot.ImageFormat, error) {
	var out []plot.ImageFormat
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(plot.ImageFormats(), plot.ImageFormat(f)) {
			known := slices.Concat([]string{"png", "svg"}, also)
			return nil, usagef("%s: unknown format %q%s (want one or more of %s, e.g. png,svg)", flag, f, suggest.DidYouMean(f, known), strings.Join(known, ", "))
		}
		if !slices.Contains(out, plot.ImageFormat(f)) {
			out = append(out, plot.ImageFormat(f))
		}
	}
	return out, nil
}

// bucketFlag returns --bucket, or the scenario's default bucket.
func bucketFlag(c *call, s *scenarios.Scenario) (time.Duration, error) {
	if !c.IsSet("bucket") {
		return runs.DefaultBucket(s.Server), nil
	}
	b := c.Duration("bucket")
	if b < time.Millisecond {
		return 0, usagef("--bucket must be at least 1ms, got %v", b)
	}
	return b, nil
}

// figureFiles are every figure in every format, in dir.
func figureFiles(dir string, figs []plot.NamedFigure, formats []plot.ImageFormat) ([]outputFile, error) {
	var files []outputFile
	for _, f := range figs {
		for _, format := range formats {
			var buf bytes.Buffer
			if err := f.Figure.Write(&buf, format); err != nil {
				return nil, err
			}
			files = append(files, outputFile{filepath.Join(dir, f.Name+"."+string(format)), buf.Bytes()})
		}
	}
	return files, nil
}

// outputFile is a file a command writes, with its content.
type outputFile struct {
	path string
	data []byte
}

// writeOutputs writes files whole or not at all, and lists them on stderr:
// stdout is only for data, so that it can be piped. Every file is written
// under a temporary name first; only when all are written are they renamed
// into place, so that a failed write leaves the previous run's files as
// they were (a rename that fails half-way leaves the earlier ones new).
func writeOutputs(c *call, files []outputFile) error {
	var pending []*pendingFile
	defer func() {
		for _, p := range pending {
			p.abort()
		}
	}()
	for _, f := range files {
		p, err := newPendingFile(f.path)
		if err != nil {
			return fmt.Errorf("writing %s: %w", f.path, pathErr(err))
		}
		pending = append(pending, p)
		if err := p.write(f.data); err != nil {
			return err
		}
	}
	for _, p := range pending {
		if err := p.place(); err != nil {
			return err
		}
	}
	for _, f := range files {
		fmt.Fprintln(c.stderr, "wrote", f.path)
	}
	return nil
}

// outputDir makes dir, the directory flag names for images, and checks that
// files can be created in it. Commands call it before running anything, so
// that a bad path fails at once (exit 2) rather than after the simulation.
func outputDir(flag, dir string) error {
	if dir == "-" {
		return usagef("%s -: images cannot go to stdout; name a directory", flag)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usagef("%s %s: %v", flag, dir, pathErr(err))
	}
	probe, err := os.CreateTemp(dir, ".retrysim-probe-*")
	if err != nil {
		return usagef("%s %s: cannot create files in it: %v", flag, dir, pathErr(err))
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// pendingFile is an output file being made: written under a temporary name
// beside its path and renamed into place when complete, so that a failed
// run leaves neither a partial file nor a truncated old one.
type pendingFile struct {
	tmp  *os.File
	path string      // as given, for messages
	real string      // where it goes: path, or the file a symbolic link at path points to
	mode os.FileMode // the existing file's permissions, or 0644 for a new one
	done bool        // the temporary file is gone: renamed into place, or removed
}

// createOutput starts the output file path, named by flag. Commands call it
// before running anything, so that a bad path fails at once (exit 2).
func createOutput(flag, path string) (*pendingFile, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, usagef("%s %s: is a directory", flag, path)
	}
	p, err := newPendingFile(path)
	if err != nil {
		return nil, usagef("%s %s: cannot create it: %v", flag, path, pathErr(err))
	}
	return p, nil
}

// newPendingFile creates the temporary file of path, in path's directory
// (a rename across file systems would not be atomic).
// A symbolic link at path is written through (its target is replaced), and
// an existing file keeps its permissions.
func newPendingFile(path string) (*pendingFile, error) {
	real, mode := path, os.FileMode(0o644)
	if target, err := filepath.EvalSymlinks(path); err == nil {
		real = target
		if fi, err := os.Stat(target); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(real), "."+filepath.Base(real)+".tmp-*")
	if err != nil {
		return nil, err
	}
	return &pendingFile{tmp: tmp, path: path, real: real, mode: mode}, nil
}

// commit writes data and puts the file in place.
func (p *pendingFile) commit(data []byte) error {
	if err := p.write(data); err != nil {
		return err
	}
	return p.place()
}

// write writes data to the temporary file and closes it.
func (p *pendingFile) write(data []byte) error {
	_, err := p.tmp.Write(data)
	err = errors.Join(err, p.tmp.Chmod(p.mode), p.tmp.Close())
	if err != nil {
		p.done = true
		os.Remove(p.tmp.Name())
		return fmt.Errorf("writing %s: %w", p.path, pathErr(err))
	}
	return nil
}

// place renames the written temporary file to the file's path.
func (p *pendingFile) place() error {
	p.done = true
	if err := os.Rename(p.tmp.Name(), p.real); err != nil {
		os.Remove(p.tmp.Name())
		return fmt.Errorf("writing %s: %w", p.path, pathErr(err))
	}
	return nil
}

// abort removes the temporary file; after commit or place it does nothing.
func (p *pendingFile) abort() {
	if p.done {
		return
	}
	p.done = true
	p.tmp.Close() // an error if write closed it already
	os.Remove(p.tmp.Name())
}

// inputFile is a file a command reads, named by flag.
type inputFile struct{ flag, path string }

// notAnInput refuses (exit 2) an output path out, named by flag, that is
// one of the command's input files, by the same name once cleaned or by
// another one (a link): writing it would destroy the input. "" and "-" (no
// file, or stdin/stdout) are no file.
func notAnInput(flag, out string, inputs ...inputFile) error {
	if out == "" || out == "-" {
		return nil
	}
	for _, in := range inputs {
		if in.path != "" && in.path != "-" && samePath(out, in.path) {
			return usagef("%s %s is the %s file %s: writing it would destroy that input; name another file", flag, out, in.flag, in.path)
		}
	}
	return nil
}

// samePath reports whether paths a and b name the same file: equal once
// made absolute and cleaned, or, for files that exist, the same file.
func samePath(a, b string) bool {
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	if errA == nil && errB == nil && absA == absB {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// pathErr drops the paths from an *fs.PathError or *os.LinkError, whose
// message repeats them (or names a temporary file): "not a directory"
// rather than "mkdir a/b: not a directory".
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// finishOutput writes data to stdout when there is no file (--out -), or
// puts the file in place and says so on stderr.
func finishOutput(c *call, file *pendingFile, out string, data []byte) error {
	if file == nil {
		_, err := c.stdout.Write(data)
		return err
	}
	if err := file.commit(data); err != nil {
		return err
	}
	fmt.Fprintln(c.stderr, "wrote", out)
	return nil
}
