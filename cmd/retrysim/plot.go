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

	"github.com/retrysim/retrysim/cmd/retrysim/internal/progress"
	"github.com/retrysim/retrysim/report"
	"github.com/retrysim/retrysim/scenarios"
)

func plotCommand() *cli.Command {
	return &cli.Command{
		Name:  "plot",
		Usage: "draw a scenario's timeline, completion-time CDF, outcomes and (with --seeds) distributions",
		UsageText: "retrysim plot --out DIR [--scenario NAME | --file PATH] [--seed N] [--seeds K] [--format png,svg] [--bucket DURATION]\n\n" +
			"Writes DIR/timeline, DIR/cdf, DIR/outcomes and, with --seeds K > 1, DIR/distributions,\n" +
			"each as .png and .svg (1200×800). The timeline shows the first seed; the CDF pools up to 1000 seeds.\n\n" +
			"Examples:\n" +
			"   retrysim plot --out plots\n" +
			"   retrysim plot --out plots --scenario long-outage --seeds 100 --format svg",
		Flags: append(scenarioFlags(),
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "directory `DIR` to write the plots to (created if missing)"},
			&cli.StringFlag{Name: "format", Value: "png,svg", Usage: "comma-separated image `FORMATS`: png, svg"},
			&cli.DurationFlag{Name: "bucket", Usage: "timeline bucket `DURATION` (default: the server's admission window)"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return usagef("plot takes no arguments, got %q", cmd.Args().Slice())
			}
			dir := cmd.String("out")
			if dir == "" {
				return usagef("plot needs --out DIR: where to write the images")
			}
			formats, err := plotFormats(cmd.String("format"))
			if err != nil {
				return err
			}
			s, first, k, err := pickScenario(cmd)
			if err != nil {
				return err
			}
			bucket, err := bucketFlag(cmd, s)
			if err != nil {
				return err
			}
			if err := outputDir("--out", dir); err != nil {
				return err
			}
			data, err := collectPlotData(ctx, cmd, s, first, k, bucket)
			if err != nil {
				return err
			}
			figs, err := report.Figures(data)
			if err != nil {
				return err
			}
			return writeFigures(cmd, dir, figs, formats)
		},
	}
}

// plotFormats parses --format for images.
func plotFormats(list string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(report.PlotFormats, f) {
			return nil, usagef("--format: unknown image format %q (want png, svg or png,svg)", f)
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// bucketFlag returns --bucket, or the scenario's default bucket.
func bucketFlag(cmd *cli.Command, s *scenarios.Scenario) (time.Duration, error) {
	if !cmd.IsSet("bucket") {
		return report.DefaultBucket(s.Server), nil
	}
	b := cmd.Duration("bucket")
	if b < time.Millisecond {
		return 0, usagef("--bucket must be at least 1ms, got %v", b)
	}
	return b, nil
}

// collectPlotData is report.CollectPlotData with a progress bar.
func collectPlotData(ctx context.Context, cmd *cli.Command, s *scenarios.Scenario, first uint64, k int, bucket time.Duration) (*report.PlotData, error) {
	bar := progress.New(cmd.Root().ErrWriter, k*len(s.Policies), fmt.Sprintf("%s: %d seeds", s.Name, k))
	defer bar.Done()
	return report.CollectPlotData(ctx, s, first, k, bucket, bar.Add)
}

// writeFigures writes every figure in every format into dir and lists the
// files on stderr: stdout is only for data, so that it can be piped.
func writeFigures(cmd *cli.Command, dir string, figs []report.NamedFigure, formats []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range figs {
		for _, format := range formats {
			var buf bytes.Buffer
			if err := f.Figure.Write(&buf, format); err != nil {
				return err
			}
			path := filepath.Join(dir, f.Name+"."+format)
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
