package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/sim"
)

// Every integer flag takes plain decimal digits only: 010 and 0x10 are
// refused rather than read as 8 and 16, and a negative number gets a
// message in words.
func TestIntegerFlagsAreDecimal(t *testing.T) {
	t.Parallel()
	flags := map[string][]string{
		"compare": {"--seed", "--seeds"},
		"plot":    {"--seed", "--seeds"},
		"sweep":   {"--seed", "--seeds"},
		"report":  {"--seed", "--seeds"},
		"check":   {"--seeds"},
	}
	extra := map[string][]string{
		"plot":   {"--out", t.TempDir()},
		"sweep":  {"--param", "clients=10:20:10"},
		"report": {"--out", "-"},
	}
	bad := map[string]string{
		"-1":                   "must be a non-negative integer",
		"010":                  "without a leading zero",
		"0x10":                 "in decimal digits",
		"1_000":                "in decimal digits",
		"+5":                   "in decimal digits",
		"1e3":                  "in decimal digits",
		"99999999999999999999": "too large",
	}
	for cmd, names := range flags {
		for _, flag := range names {
			for value, want := range bad {
				args := append([]string{cmd, flag, value}, extra[cmd]...)
				out, errOut, code, _ := runCLI(t, args...)
				if code != exitUsage || !strings.Contains(errOut, want) || strings.Contains(errOut, "strconv") || out != "" {
					t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", args, code, errOut, want)
				}
			}
		}
	}
	// Plain decimal is read as such.
	out, errOut, code, _ := runCLI(t, "compare", "--seed", "10", "--seeds", "2", "--format", "json")
	if code != 0 || !strings.Contains(out, `"first_seed": 10`) {
		t.Errorf("--seed 10 --seeds 2: exit %d, %s%s", code, errOut, out)
	}
}

// Every line of every command's --help fits 80 columns, and no flag shows a
// default that the flag would refuse.
func TestHelpFits80Columns(t *testing.T) {
	t.Parallel()
	helps := [][]string{{"--help"}, {"help"}, {"completion", "--help"}}
	for _, c := range []string{"compare", "list", "plot", "sweep", "report", "check", "show", "diff"} {
		helps = append(helps, []string{c, "--help"}, []string{"help", c})
	}
	for _, args := range helps {
		out, errOut, code, _ := runCLI(t, args...)
		if code != 0 || out == "" {
			t.Errorf("%v: exit %d, %s", args, code, errOut)
		}
		for i, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > 80 {
				t.Errorf("%v line %d is %d columns:\n%s", args, i+1, n, line)
			}
		}
		if strings.Contains(out, "(default: 0s)") {
			t.Errorf("%v shows the default 0s, which the flag refuses:\n%s", args, out)
		}
	}
}

func TestHelpUnknownTopicIsUsageError(t *testing.T) {
	t.Parallel()
	out, errOut, code, _ := runCLI(t, "help", "nope")
	if code != exitUsage || !strings.Contains(errOut, `no help for "nope"`) {
		t.Errorf("help nope: exit %d, stdout %q, stderr %q; want exit 2", code, out, errOut)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	out, errOut, code, _ := runCLI(t, "--version")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	// A test binary records no VCS information: the output says so.
	for _, want := range []string{"retrysim ", "commit:  unknown", "go:      " + runtime.Version()} {
		if !strings.Contains(out, want) {
			t.Errorf("--version lacks %q:\n%s", want, out)
		}
	}
}

func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh", "fish"} {
		out, errOut, code, _ := runCLI(t, "completion", shell)
		if code != 0 || !strings.Contains(out, "retrysim") || len(out) < 200 {
			t.Errorf("completion %s: exit %d, stderr %q, script:\n%s", shell, code, errOut, out)
		}
	}
	if _, _, code, _ := runCLI(t, "completion", "tcsh"); code == 0 {
		t.Error("completion tcsh succeeded")
	}
}

// A run whose context is cancelled (as Ctrl-C does in main) exits 130 with
// a short message, not 1 with "context canceled".
func TestCancelledRunExits130(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, args := range [][]string{
		{"compare", "--seeds", "5"},
		{"sweep", "--param", "clients=10:20:10", "--seeds", "3"},
		{"plot", "--out", t.TempDir(), "--seeds", "3"},
		{"check", "--scenario", "overload-burst"},
	} {
		out, errOut, code, _ := runCLIContext(t, ctx, args...)
		if code != exitInterrupted || errOut != "retrysim: interrupted\n" || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 130 and only 'interrupted'", args, code, out, errOut)
		}
	}
}

// A panic inside a simulation run is an internal error: exit 3 with the
// panic and its stack, not a crash of the process (whose status, 2, would
// read as a usage error).
func TestPanicInRunExits3(t *testing.T) {
	t.Parallel()
	orig := scenariotest.Builtin(t, "overload-burst")
	s := *orig
	s.Server = &sim.CapacityWindows{Phases: orig.Server.(*sim.CapacityWindows).Phases, ResponseTime: panicky{}}
	err := runs.Seeds(context.Background(), &s, 1, 2, 0, func(int, int, *sim.Result) {})
	var p *runs.PanicError
	if !errors.As(err, &p) {
		t.Fatalf("runs.Seeds returned %v, want a *runs.PanicError", err)
	}
	var stderr bytes.Buffer
	if code := exitCode(err, &stderr); code != exitCrash {
		t.Errorf("exit %d, want %d", code, exitCrash)
	}
	for _, want := range []string{"internal error", "panic: ", "goroutine ", "runs.runOne"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

// panicky is a response time that panics: a stand-in for a bug in the engine.
type panicky struct{}

func (panicky) Sample(*rand.Rand) time.Duration { panic("panicky response time") }

// Ctrl-C during a long multi-seed run: the process exits 130 and says
// "interrupted". The run (long-outage on 20,000 seeds) would take minutes;
// RunSeeds stops handing out runs when the context is cancelled. The
// warning about a long run is printed after the signal handler is set up
// and before the run starts, so the test sends SIGINT once it has read it.
func TestSIGINTExits130(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT to send on Windows")
	}
	bin := builtBinary(t)
	cmd := exec.Command(bin, "compare", "--scenario", "long-outage", "--seeds", "20000", "--format", "csv")
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var rest bytes.Buffer
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			rest.WriteString(sc.Text() + "\n")
			if !signalled && strings.Contains(sc.Text(), "warning: this is a long run") {
				signalled = true
				if err := cmd.Process.Signal(os.Interrupt); err != nil {
					done <- err
					return
				}
			}
		}
		done <- cmd.Wait()
	}()
	// Generous: a run that ignores the signal takes minutes and fails here.
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
			t.Fatalf("exit: %v; want status 130\nstderr:\n%s", err, rest.String())
		}
		if !strings.Contains(rest.String(), "retrysim: interrupted") || strings.Contains(rest.String(), "context canceled") {
			t.Errorf("stderr:\n%s", rest.String())
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("no exit 90 s after SIGINT (or no warning to wait for); stderr so far:\n%s", rest.String())
	}
}
