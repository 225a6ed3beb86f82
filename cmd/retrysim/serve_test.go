package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
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
	} {
		out, errOut, code, _ := runCLI(t, tt.args...)
		if code != exitUsage || !strings.Contains(errOut, tt.want) || out != "" {
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
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v; stderr:\n%s", err, errOut.String())
	}
	if s := errOut.String(); !strings.Contains(s, "scenario overload-burst (seed 1, speed 10)") ||
		!strings.Contains(s, "stopped after 1 requests: 0 admitted, 1 rejected, 0 refused") {
		t.Errorf("stderr:\n%s", s)
	}
}
