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
			"              [--force]\n\n" +
			"Writes DIR/timeline, DIR/load, DIR/cdf, DIR/outcomes and, with\n" +
			"--seeds K > 1, DIR/distributions, each as .png and .svg (1200×800).\n" +
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
		), shardFlags()...)...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return usagef("plot takes no arguments, got %q", cmd.Args().Slice())
			}
			dir, dirFlag, err := flagOrOldName(cmd, "plot-dir", "out")
			if err != nil {
				return err
			}
			if dir == "" {
				return usagef("plot needs --plot-dir DIR: where to write the images")
			}
			formats, data, err := plotAndDataFormats(cmd, "format")
			if err != nil {
				return err
			}
			s, first, k, err := pickScenario(cmd)
			if err != nil {
				return err
			}
			if err := checkPlotWork(cmd, s, k); err != nil {
				return err
			}
			bucket, err := bucketFlag(cmd, s)
			if err != nil {
				return err
			}
			if sharding(cmd) {
				return runShard(ctx, cmd, []runs.Group{{Scenario: s, First: first, Seeds: k, Plot: true, Bucket: bucket}})
			}
			if err := outputDir(dirFlag, dir); err != nil {
				return err
			}
			pd, err := collectPlotData(ctx, cmd, s, first, k, bucket)
			if err != nil {
				return err
			}
			figs, err := plot.Figures(pd)
			if err != nil {
				return err
			}
			if err := writeFigures(cmd, dir, figs, formats); err != nil {
				return err
			}
			return writeTimelineData(cmd, dir, pd, data)
		},
	}
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
func flagOrOldName(cmd *cli.Command, name string, old ...string) (value, given string, err error) {
	value, given = cmd.String(name), "--"+name
	set := ""
	for _, n := range append([]string{name}, old...) {
		if !cmd.IsSet(n) {
			continue
		}
		if set != "" {
			return "", "", usagef("--%s and --%s are the same flag; give one of them", set, n)
		}
		set, value, given = n, cmd.String(n), "--"+n
	}
	return value, given, nil
}

// plotFormatsFlag parses --plot-format (or its hidden old name, if any).
func plotFormatsFlag(cmd *cli.Command, old ...string) ([]plot.ImageFormat, error) {
	list, given, err := flagOrOldName(cmd, "plot-format", old...)
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
func plotAndDataFormats(cmd *cli.Command, old ...string) ([]plot.ImageFormat, []string, error) {
	list, given, err := flagOrOldName(cmd, "plot-format", old...)
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
	formats, err := plotFormats(given, strings.Join(images, ","))
	return formats, data, err
}

// writeTimelineData writes d's timelines into dir as timeline.json and/or
// timeline.csv and lists the files on stderr.
func writeTimelineData(cmd *cli.Command, dir string, d *runs.PlotData, formats []string) error {
	for _, f := range formats {
		var buf bytes.Buffer
		var err error
		if f == "json" {
			err = report.WriteTimelineJSON(&buf, d)
		} else {
			err = report.WriteTimelineCSV(&buf, d)
		}
		if err != nil {
			return err
		}
		path := filepath.Join(dir, "timeline."+f)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintln(cmd.Root().ErrWriter, "wrote", path)
	}
	return nil
}

// plotFormats parses a comma-separated list of image formats, given as flag.
func plotFormats(flag, list string) ([]plot.ImageFormat, error) {
	var out []plot.ImageFormat
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(plot.ImageFormats(), plot.ImageFormat(f)) {
			return nil, usagef("%s: unknown image format %q (want png, svg or png,svg)", flag, f)
		}
		if !slices.Contains(out, plot.ImageFormat(f)) {
			out = append(out, plot.ImageFormat(f))
		}
	}
	return out, nil
}

// bucketFlag returns --bucket, or the scenario's default bucket.
func bucketFlag(cmd *cli.Command, s *scenarios.Scenario) (time.Duration, error) {
	if !cmd.IsSet("bucket") {
		return runs.DefaultBucket(s.Server), nil
	}
	b := cmd.Duration("bucket")
	if b < time.Millisecond {
		return 0, usagef("--bucket must be at least 1ms, got %v", b)
	}
	return b, nil
}

// collectPlotData is runs.CollectPlotData with a progress bar: k seeds and
// the timeline run of every policy.
func collectPlotData(ctx context.Context, cmd *cli.Command, s *scenarios.Scenario, first uint64, k int, bucket time.Duration) (*runs.PlotData, error) {
	if st := merging(cmd); st != nil {
		return st.plotData(runs.Group{Scenario: s, First: first, Seeds: k, Plot: true, Bucket: bucket})
	}
	w := startWatch(cmd, fmt.Sprintf("%s: %d seeds", s.Name, k), planned{s, k + 1})
	defer w.done()
	return runs.CollectPlotData(w.context(ctx, s), s, first, k, bucket, nil)
}

// writeFigures writes every figure in every format into dir and lists the
// files on stderr: stdout is only for data, so that it can be piped.
func writeFigures(cmd *cli.Command, dir string, figs []plot.NamedFigure, formats []plot.ImageFormat) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range figs {
		for _, format := range formats {
			var buf bytes.Buffer
			if err := f.Figure.Write(&buf, format); err != nil {
				return err
			}
			path := filepath.Join(dir, f.Name+"."+string(format))
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				return err
			}
			fmt.Fprintln(cmd.Root().ErrWriter, "wrote", path)
		}
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
	path string
}

// createOutput starts the output file path, named by flag. Commands call it
// before running anything, so that a bad path fails at once (exit 2).
func createOutput(flag, path string) (*pendingFile, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, usagef("%s %s: is a directory", flag, path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, usagef("%s %s: cannot create it: %v", flag, path, pathErr(err))
	}
	return &pendingFile{tmp, path}, nil
}

// commit writes data and puts the file in place.
func (p *pendingFile) commit(data []byte) error {
	_, err := p.tmp.Write(data)
	err = errors.Join(err, p.tmp.Chmod(0o644), p.tmp.Close())
	if err == nil {
		err = os.Rename(p.tmp.Name(), p.path)
	}
	if err != nil {
		os.Remove(p.tmp.Name())
		return fmt.Errorf("writing %s: %w", p.path, err)
	}
	return nil
}

// abort removes the temporary file; after commit it does nothing.
func (p *pendingFile) abort() {
	if p.tmp.Close() == nil {
		os.Remove(p.tmp.Name())
	}
}

// pathErr drops the path from an *fs.PathError, whose message repeats it
// (or names a temporary file): "not a directory" rather than "mkdir a/b: not
// a directory".
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// finishOutput writes data to stdout when there is no file (--out -), or
// puts the file in place and says so on stderr.
func finishOutput(cmd *cli.Command, file *pendingFile, out string, data []byte) error {
	if file == nil {
		_, err := cmd.Root().Writer.Write(data)
		return err
	}
	if err := file.commit(data); err != nil {
		return err
	}
	fmt.Fprintln(cmd.Root().ErrWriter, "wrote", out)
	return nil
}
