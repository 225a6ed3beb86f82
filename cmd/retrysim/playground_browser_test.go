package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/retrysim/retrysim/playground"
)

// chromiumPath finds Debian's chromium (.ci/run installs it), or
// $RETRYSIM_CHROMIUM; without one the test skips, or fails when
// RETRYSIM_REQUIRE_CHROMIUM=1 (.ci/run, once it has installed it).
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("RETRYSIM_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("RETRYSIM_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("RETRYSIM_REQUIRE_CHROMIUM=1, yet chromium is not on PATH")
	}
	t.Skip("SKIP: chromium is not installed (apt-get install -y chromium; .ci/run installs it), so the playground's browser test does not run")
	return ""
}

// TestPlaygroundInChromium loads the page that 'retrysim playground --out'
// writes from a plain file server in headless Chromium, changes the
// clients field, waits for the table, and checks that it is what the
// command the page shows prints; ticks the plots and checks that the
// images are the SVG files of the plot command it shows; then that the
// page's URL alone brings the same table back, that a big run shows its
// progress and can be cancelled, and that a link with a file of its own
// (playground.Link) shows what the command prints. RETRYSIM_PLAYGROUND_SCREENSHOT=FILE saves a screenshot
// (docs/img/playground.png).
func TestPlaygroundInChromium(t *testing.T) {
	browser := chromiumPath(t)
	if testing.Short() {
		t.Skip("compiles the engine for the browser")
	}
	dir := t.TempDir()
	if _, stderr, code, err := runCLI(t, "playground", "--out", dir); code != 0 {
		t.Fatalf("playground --out: %v\n%s", err, stderr)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	actx, cancel := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(browser), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1400, 900), chromedp.Flag("disable-dev-shm-usage", true))
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()

	// done waits for the run of a request whose command contains want.
	done := func(want string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](fmt.Sprintf(
			`document.getElementById('status').dataset.state === 'error' || (document.getElementById('status').dataset.state === 'done' && document.getElementById('command').textContent.includes(%q))`, want),
			chromedp.WithPollingTimeout(2*time.Minute))
	}
	// open loads url in a new tab, which becomes tab, and waits for the
	// run of a request whose command contains want. (A tab per load: a
	// second load in one tab could leave a poll on the old page.)
	var tab context.Context
	var console func() string
	open := func(url, want string) {
		t.Helper()
		tctx, cancel := chromedp.NewContext(bctx)
		t.Cleanup(cancel)
		tab, console = tctx, collectConsole(tctx)
		if err := chromedp.Do(tab, chromedp.Navigate(url), done(want)); err != nil {
			t.Fatalf("loading %.80s: %v; console:\n%s", url, err, console())
		}
	}
	// shown returns the page's table and command, failing on an error.
	shown := func() (output, command string) {
		t.Helper()
		state, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById('status').dataset.state + ': ' + document.getElementById('status').textContent`))
		if err != nil || !strings.HasPrefix(state, "done") {
			t.Fatalf("the page says %q (%v); console:\n%s", state, err, console())
		}
		output, err = chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById('output').textContent`))
		if err != nil {
			t.Fatal(err)
		}
		command, err = chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById('command').textContent`))
		if err != nil {
			t.Fatal(err)
		}
		return output, command
	}

	open(srv.URL+"/#s=overload-burst", "retrysim compare")
	// Type into the clients field, as a person would.
	if err := chromedp.Do(tab, chromedp.SendKeys("#param-clients", "7"), done("clients=7")); err != nil {
		t.Fatalf("changing clients: %v; console:\n%s", err, console())
	}
	output, command := shown()
	if command != "retrysim compare --scenario overload-burst --param clients=7" {
		t.Errorf("the page's command is %q", command)
	}
	want, _, code, err := runCLI(t, strings.Fields(command)[1:]...)
	if code != 0 {
		t.Fatalf("%s: %v", command, err)
	}
	if output != want {
		t.Fatalf("the page shows\n%s\n%s prints\n%s", output, command, want)
	}
	if !strings.Contains(output, "|       7 |") {
		t.Errorf("the table has no row of 7 clients:\n%s", output)
	}

	// The plots: the images the page shows are the files of the plot
	// command it shows.
	if err := chromedp.Do(tab, chromedp.Click("#plots"), chromedp.Poll[chromedp.Void](
		`document.getElementById('status').dataset.state !== 'running' && document.querySelectorAll('#figures img').length > 0`,
		chromedp.WithPollingTimeout(2*time.Minute))); err != nil {
		t.Fatalf("drawing the plots: %v; console:\n%s", err, console())
	}
	if _, command = shown(); command != "retrysim compare --scenario overload-burst --param clients=7" {
		t.Errorf("with plots, the page's command is %q", command)
	}
	plotCommand, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById('plot-command').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	svgs, err := chromedp.Run(tab, chromedp.Evaluate[map[string]string](`Promise.all([...document.querySelectorAll('#figures img')].map(
		(img) => fetch(img.src).then((r) => r.text()).then((svg) => [img.dataset.name, svg]))).then(Object.fromEntries)`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	plotDir := t.TempDir()
	args := strings.Fields(plotCommand)[1:]
	for i := range args {
		if args[i] == "plots" {
			args[i] = plotDir
		}
	}
	if _, stderr, code, err := runCLI(t, args...); code != 0 {
		t.Fatalf("%s: %v\n%s", plotCommand, err, stderr)
	}
	for _, name := range []string{"timeline", "load", "cdf", "outcomes"} {
		file, err := os.ReadFile(filepath.Join(plotDir, name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		if svgs[name] != string(file) {
			t.Errorf("the page's %s (%d bytes) is not %s's %s.svg (%d bytes)", name, len(svgs[name]), plotCommand, name, len(file))
		}
	}
	if len(svgs) != 4 {
		t.Errorf("the page shows %d figures, want 4", len(svgs))
	}
	if path := os.Getenv("RETRYSIM_PLAYGROUND_SCREENSHOT"); path != "" {
		if _, err := chromedp.Run(tab, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`)); err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Clean(path), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The URL is the state: a fresh load of it shows the same table.
	url, err := chromedp.Run(tab, chromedp.Evaluate[string](`location.href`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(url, "plots=1") {
		t.Errorf("the URL %s does not keep the plots", url)
	}
	open(url, "clients=7")
	if again, _ := shown(); again != want {
		t.Fatalf("%s shows\n%s\nwant\n%s", url, again, want)
	}

	// The shared throttle's switch (a choice of the registry's 0/1
	// parameter): off, the table changes and is still the command's.
	if err := chromedp.Do(tab, chromedp.Evaluate[chromedp.Void](
		`const e = document.getElementById('param-shared_throttle'); e.value = '0'; e.dispatchEvent(new Event('change'))`),
		done("shared_throttle=0")); err != nil {
		t.Fatalf("switching the shared throttle off: %v; console:\n%s", err, console())
	}
	output, command = shown()
	if command != "retrysim compare --scenario overload-burst --param clients=7 --param shared_throttle=0" {
		t.Errorf("with the throttle off, the page's command is %q", command)
	}
	off, _, code, err := runCLI(t, strings.Fields(command)[1:]...)
	if code != 0 || output != off {
		t.Fatalf("with the throttle off, the page shows\n%s\n%s prints (%v)\n%s", output, command, err, off)
	}
	if off == want {
		t.Errorf("switching the shared throttle off changed nothing:\n%s", off)
	}

	// A big run (2,000 seeds) shows its progress and stops when
	// cancelled; the next run (one seed, 50 clients) works.
	tctx, cancelTab := chromedp.NewContext(bctx)
	defer cancelTab()
	tab, console = tctx, collectConsole(tctx)
	if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/#s=long-outage&seeds=2000"), chromedp.Poll[chromedp.Void](
		`document.getElementById('status').dataset.state === 'running' && /[1-9][0-9]*% /.test(document.getElementById('status').textContent)`,
		chromedp.WithPollingTimeout(2*time.Minute))); err != nil {
		t.Fatalf("no progress on 2,000 seeds: %v; console:\n%s", err, console())
	}
	if err := chromedp.Do(tab, chromedp.Click("#cancel"), chromedp.Poll[chromedp.Void](
		`document.getElementById('status').textContent === 'cancelled'`, chromedp.WithPollingTimeout(time.Minute)),
		chromedp.Evaluate[chromedp.Void](`const e = document.getElementById('seeds'); e.value = '1'; e.dispatchEvent(new Event('input'))`),
		chromedp.SendKeys("#param-clients", "50"), chromedp.Poll[chromedp.Void](
			`document.getElementById('status').dataset.state === 'done' && document.getElementById('command').textContent.includes('clients=50')`,
			chromedp.WithPollingTimeout(2*time.Minute))); err != nil {
		t.Fatalf("cancelling 2,000 seeds, then 50 clients: %v; console:\n%s", err, console())
	}
	output, command = shown()
	if want, _, code, err = runCLI(t, strings.Fields(command)[1:]...); code != 0 || output != want {
		t.Fatalf("after a cancel, the page shows\n%s\n%s prints (%v)\n%s", output, command, err, want)
	}

	// A link with a file of its own (as report --playground makes one):
	// the page runs that file, and the command with the file saved as
	// scenario.yaml prints what it shows.
	yaml, err := os.ReadFile(filepath.Join(docsRoot, "docs", "examples", "custom.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r := playground.Request{YAML: string(yaml), Seed: "5", Seeds: 2, Params: []string{"clients=9"}}
	open(playground.Link(srv.URL+"/", r), "clients=9")
	output, command = shown()
	if command != r.Command() {
		t.Errorf("the linked page's command is %q, want %q", command, r.Command())
	}
	saved := filepath.Join(t.TempDir(), playground.FileName)
	if err := os.WriteFile(saved, yaml, 0o644); err != nil {
		t.Fatal(err)
	}
	args = strings.Fields(command)[1:]
	for i := range args {
		if args[i] == playground.FileName {
			args[i] = saved
		}
	}
	if want, _, code, err = runCLI(t, args...); code != 0 {
		t.Fatalf("%s: %v", command, err)
	}
	if output != want {
		t.Fatalf("the linked page shows\n%s\n%s prints\n%s", output, command, want)
	}
}

// collectConsole gathers what the page writes to its console, for
// failure messages.
func collectConsole(ctx context.Context) func() string {
	var lines []string
	ch := make(chan string, 100)
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			select {
			case ch <- fmt.Sprintf("%s: %s", m.Type, m.Text):
			default:
			}
		}
	}()
	return func() string {
		for {
			select {
			case l := <-ch:
				lines = append(lines, l)
			default:
				return strings.Join(lines, "\n")
			}
		}
	}
}
