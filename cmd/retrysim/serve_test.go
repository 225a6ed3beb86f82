package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

// validate on the default scenario, for real over loopback at speed 2
// (about 15 s; below the default, for a margin under -race): every policy
// agrees with the simulation. Not parallel: other tests' load would make
// the real waits later.
func TestValidateDefaultScenario(t *testing.T) {
	realTimeOnly(t)
	out, errOut, code, _ := runCLI(t, "validate", "--speed", "2")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !strings.HasPrefix(out, "scenario overload-burst, seed 1, speed 2\n") {
		t.Errorf("no heading:\n%s", out)
	}
	for _, p := range []string{"immediate", "capped-exponential", "full-jitter", "gated"} {
		if !strings.Contains(out, "\n"+p+": agrees (") {
			t.Errorf("%s does not agree:\n%s", p, out)
		}
	}
	if !strings.Contains(errOut, "policy 4/4, gated, for real") {
		t.Errorf("no progress on stderr: %q", errOut)
	}
}

// realTimeOnly skips a test that compares real-clock runs with the
// simulation unless RETRYSIM_REALTIME=1: its verdict depends on how late
// the machine wakes goroutines, which a shared CI machine does not bound.
// The same comparison runs exactly, on fake time, in package serve.
func realTimeOnly(t *testing.T) {
	t.Helper()
	if os.Getenv("RETRYSIM_REALTIME") != "1" {
		t.Skip("real-time validation; set RETRYSIM_REALTIME=1 to run it")
	}
}

func TestValidateAndServeInputErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", "--speed", "0"}, "--speed must be > 0"},
		{[]string{"validate", "--speed", "5000"}, "at most 1000"},
		{[]string{"validate", "--scenario", "huge-burst"}, "has 1000000 clients"},
		{[]string{"validate", "--scenario", "nope"}, `no scenario "nope"`},
		{[]string{"validate", "extra"}, "takes no arguments"},
		{[]string{"serve", "--speed", "-1"}, "--speed must be > 0"},
		{[]string{"serve", "--file", "no/such/file.yaml"}, "no/such/file.yaml"},
		{[]string{"serve", "extra"}, "takes no arguments"},
		// What serve cannot run, and addresses that cannot be one, are
		// refused input, in the words of a scenario file.
		{[]string{"serve", "--scenario", "aws-occ-contention"}, "the contention server model decides requests after they arrive"},
		{[]string{"validate", "--scenario", "aws-occ-contention"}, "the contention server model decides requests after they arrive"},
		{[]string{"serve", "--scenario", "metastable-lifo"}, "the queue server model decides requests after they arrive"},
		{[]string{"validate", "--scenario", "metastable-lifo"}, "the queue server model decides requests after they arrive"},
		{[]string{"serve", "--addr", "127.0.0.1:99999"}, `the address "127.0.0.1:99999" has the port "99999"`},
		{[]string{"serve", "--addr", "8080"}, "is not HOST:PORT"},
		{[]string{"serve", "--grace", "-1s"}, "--grace must be >= 0"},
	} {
		out, errOut, code, _ := runCLI(t, tt.args...)
		if code != exitUsage || !strings.Contains(errOut, tt.want) || strings.Contains(errOut, "*sim.") || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.args, code, out, errOut, tt.want)
		}
	}
	// An address that cannot be listened on is not a usage error.
	if _, errOut, code, _ := runCLI(t, "serve", "--addr", "256.0.0.1:0"); code != exitFail {
		t.Errorf("bad address: exit %d, %s", code, errOut)
	}
}

func TestServeAndValidateHelpFit80Columns(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"serve", "validate"} {
		out, errOut, code, _ := runCLI(t, c, "--help")
		if code != 0 || !strings.Contains(out, "retrysim "+c) {
			t.Fatalf("%s --help: exit %d %s", c, code, errOut)
		}
		for i, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > 80 {
				t.Errorf("%s --help line %d is %d columns:\n%s", c, i+1, n, line)
			}
		}
	}
}

// serve prints its URL, answers as the model says, and stops cleanly (exit
// 0) when its context ends, as on Ctrl-C or SIGTERM.
func TestServeCommand(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var errOut strings.Builder
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"retrysim", "serve", "--addr", "127.0.0.1:0", "--speed", "10"}, pw, &errOut)
		_ = pw.Close()
		done <- err
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatalf("no URL printed: %v", <-done)
	}
	url := sc.Text()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	// The default scenario rejects everything for its first 2 s (0.2 s here).
	resp, err := http.Post(url+"/v1/messages", "application/json",
		strings.NewReader(`{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 529 || !strings.Contains(string(body), "overloaded_error") {
		t.Errorf("first request: %d %s", resp.StatusCode, body)
	}
	// A client pointed at the wrong base URL shows in the totals.
	if resp, err := http.Post(url+"/v1/v1/messages", "application/json", strings.NewReader("{}")); err == nil {
		resp.Body.Close()
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v; stderr:\n%s", err, errOut.String())
	}
	if s := errOut.String(); !strings.Contains(s, "scenario overload-burst (seed 1, speed 10)") ||
		!strings.Contains(s, "stopped after 1 requests: 0 admitted, 1 rejected, 0 refused; 1 other requests turned away") ||
		!strings.Contains(s, "; 0 output tokens wasted (streamed before a mid-stream failure)") {
		t.Errorf("stderr:\n%s", s)
	}
}

// slowScenario answers each request after an hour: a response stays in
// flight until serve cuts it.
const slowScenario = `scenarios:
  - name: slow
    server:
      response_time: 1h
      phases:
        - admit: 10
          window: 1h
    clients:
      count: 1
    policies:
      - name: once
        type: immediate
        max_attempts: 1
`

// servedProcess is the built retrysim serving slowScenario, with a
// request in flight.
type servedProcess struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	exited chan error
}

func startSlowServe(t *testing.T, args ...string) *servedProcess {
	t.Helper()
	file := filepath.Join(t.TempDir(), "slow.yaml")
	if err := os.WriteFile(file, []byte(slowScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(builtBinary(t), append([]string{"serve", "--file", file, "--addr", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &servedProcess{cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatalf("no URL printed; stderr:\n%s", p.stderr)
	}
	url := sc.Text()
	go func() { p.exited <- cmd.Wait() }()
	go func() {
		if resp, err := http.Post(url+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","max_tokens":8,"messages":[{}]}`)); err == nil {
			resp.Body.Close()
		}
	}()
	poll(t, "the request in flight", func() bool {
		resp, err := http.Get(url + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(b), "\nretrysim_serve_in_flight 1\n")
	})
	return p
}

// wait returns the exit code, failing if the process runs on for 20 s.
func (p *servedProcess) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-p.exited:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(20 * time.Second):
		t.Fatalf("serve still runs 20 s after it was told to stop; stderr:\n%s", p.stderr)
		return -1
	}
}

// poll checks cond every 10 ms for at most 10 s.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// When the grace ends with a response in flight, serve cuts it, says so
// and exits 0: it stopped because it was asked to.
func TestServeGraceEndsCutsAndExitsZero(t *testing.T) {
	t.Parallel()
	p := startSlowServe(t, "--grace", "100ms")
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != 0 || !strings.Contains(p.stderr.String(), "cut 1 responses still in flight") {
		t.Errorf("exit %d; stderr:\n%s", code, p.stderr)
	}
}

// A second signal during the grace ends serve at once (the grace here is
// ten minutes), cutting the response in flight.
func TestServeSecondSignalEndsAtOnce(t *testing.T) {
	t.Parallel()
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			p := startSlowServe(t, "--grace", "10m")
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			poll(t, "the stopping line", func() bool { return strings.Contains(p.stderr.String(), "retrysim serve: stopping") })
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := p.wait(t); code != 0 || !strings.Contains(p.stderr.String(), "cut 1 responses still in flight") {
				t.Errorf("exit %d; stderr:\n%s", code, p.stderr)
			}
		})
	}
}
