package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/playground"
	"github.com/retrysim/retrysim/scenarios"
)

func playgroundCommand() *cli.Command {
	return &cli.Command{
		Name:  "playground",
		Usage: "serve a page that runs retrysim in the browser (WebAssembly)",
		UsageText: "retrysim playground [--addr HOST:PORT] [--out DIR] [--wasm FILE]\n\n" +
			"Compiles the engine for the browser (GOOS=js GOARCH=wasm, with the go\n" +
			"command, from the checkout it runs in, or else, for a binary installed\n" +
			"with go install ...@VERSION, from that version in the module cache)\n" +
			"unless --wasm\n" +
			"gives it, then serves the page until Ctrl-C, or with --out writes it as\n" +
			"static files for any file server. Every run happens in the browser;\n" +
			"the page shows the 'retrysim compare' command that prints its table.\n\n" +
			"Examples:\n" +
			"   retrysim playground                  # http://127.0.0.1:8026/\n" +
			"   retrysim playground --out site       # site/index.html and the rest",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8026", Usage: "`HOST:PORT` to listen on (port 0 picks a free one)"},
			&cli.StringFlag{Name: "out", Usage: "write the page's files to `DIR` instead of serving them"},
			&cli.StringFlag{Name: "wasm", Usage: "the engine already compiled, `FILE` (GOOS=js GOARCH=wasm go build " + playground.EnginePackage + "); wasm_exec.js still comes from 'go env GOROOT'"},
		},
		Action: playgroundAction,
	}
}

func playgroundAction(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Present() {
		return usagef("playground takes no arguments, got %q", cmd.Args().Slice())
	}
	site, err := playgroundSite(ctx, cmd.String("wasm"))
	if err != nil {
		return err
	}
	stderr := cmd.Root().ErrWriter
	if dir := cmd.String("out"); dir != "" {
		return writeSite(dir, site, stderr)
	}
	ln, err := net.Listen("tcp", cmd.String("addr"))
	if err != nil {
		return usagef("--addr %s: %v", cmd.String("addr"), err)
	}
	url := "http://" + ln.Addr().String() + "/"
	fmt.Fprintln(cmd.Root().Writer, url)
	fmt.Fprintf(stderr, "retrysim playground: serving %s (the engine runs in the browser); Ctrl-C stops\n", url)
	srv := &http.Server{Handler: site, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// playgroundSite is the page with the engine of --wasm, or one compiled
// now from the module's source.
func playgroundSite(ctx context.Context, wasm string) (playground.Site, error) {
	if wasm == "" {
		tmp, err := os.MkdirTemp("", "retrysim-playground")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		wasm = filepath.Join(tmp, playground.EngineFile)
		if err := buildEngine(ctx, wasm); err != nil {
			return nil, usageError{err}
		}
	}
	engine, err := os.ReadFile(wasm)
	if err != nil {
		return nil, usagef("--wasm %s: %v", wasm, pathErr(err))
	}
	wasmExec, err := playground.WasmExec(ctx)
	if err != nil {
		return nil, usageError{err}
	}
	return playground.NewSite(engine, wasmExec)
}

// buildEngine compiles the engine into out from the checkout around the
// working directory, or else, for a binary installed with 'go install
// ...@VERSION', from that version's source in the module cache.
func buildEngine(ctx context.Context, out string) error {
	here := playground.BuildEngine(ctx, ".", out)
	if here == nil {
		return nil
	}
	v := readBuildVersion().module
	if v == "devel" || strings.Contains(v, "+") { // a build from a checkout: no module version to fetch
		return here
	}
	dir, err := playground.ModuleDir(ctx, v)
	if err != nil {
		return fmt.Errorf("%w\n(and from the module cache: %v)", here, err)
	}
	return playground.BuildEngine(ctx, dir, out)
}

// writeSite writes the site's files into dir, each whole or not at all.
func writeSite(dir string, site playground.Site, stderr io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usagef("--out %s: %v", dir, pathErr(err))
	}
	for _, name := range site.Names() {
		p, err := createOutput("--out", filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := p.commit(site[name]); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "retrysim playground: wrote %d files to %s; serve the folder with any file server and open index.html\n", len(site), dir)
	return nil
}

// playgroundLinkFlag is report's --playground: where the playground is
// served, for a link to it with the report's scenario preloaded.
func playgroundLinkFlag() cli.Flag {
	return &cli.StringFlag{Name: "playground", Usage: "link the report to the playground at `URL` (where 'retrysim playground' serves it or its --out files are hosted), with this scenario and its seeds preloaded"}
}

// playgroundLink is the address of report's scenario s, on seeds first to
// first+k-1, in the playground of --playground, or "" without it. A
// scenario from --file takes the file along in the link.
func playgroundLink(c *call, s *scenarios.Scenario, first uint64, k int) (string, error) {
	base := c.String("playground")
	if base == "" {
		return "", nil
	}
	if err := checkPlaygroundLink(c); err != nil {
		return "", err
	}
	r := playground.Request{Scenario: s.Name, Seed: strconv.FormatUint(first, 10), Seeds: k}
	if c.IsSet("vs") {
		r.Vs = c.String("vs")
	}
	if path := c.String("file"); path != "" {
		data, err := readLimited(path, inputLimit("--file"))
		if err != nil {
			return "", usagef("--playground: reading --file %s again: %v", path, pathErr(err))
		}
		r.YAML = string(data)
	}
	return playground.Link(base, r), nil
}

// checkPlaygroundLink checks --playground before any run.
func checkPlaygroundLink(c *call) error {
	base := c.String("playground")
	if base == "" {
		return nil
	}
	if u, err := url.Parse(base); err != nil || u.Fragment != "" {
		return usagef("--playground %q: want the page's URL, without a #fragment", base)
	}
	if c.Bool("all") {
		return usagef("--playground links the page to one scenario; it does not work with --all")
	}
	if c.String("file") == "-" {
		return usagef("--playground takes the scenario file along, so it needs --file PATH, not standard input")
	}
	return nil
}
