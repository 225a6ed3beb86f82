//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/proctest"
)

// Ctrl-C (the run's context cancelled) ends validate --exec at once with
// exit 130, and the program's children with it: before, it waited on the
// output pipe that the shell's background child held (30 s here) and left
// that child running. A real program, on the real clock; the limits only
// guard against a hang.
func TestValidateExecInterrupted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := writeFile(t, "e.yaml", "scenarios:\n  - name: e\n    server: {phases: [{reject: overloaded}]}\n    clients: {count: 1, max_attempts: 3}\n    policies: [{name: anthropic-sdk-go}]\n")
	pidFile := filepath.Join(dir, "child")
	command := "sleep 30 & echo $! > '" + pidFile + ".tmp' && mv '" + pidFile + ".tmp' '" + pidFile + "'; wait"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		code   int
		stderr string
	}
	done := make(chan result, 1)
	go func() {
		_, errOut, code, _ := runCLIContext(t, ctx, "validate", "--file", file, "--exec", command, "--preset", "anthropic-sdk-go", "--seeds", "2")
		done <- result{code, errOut}
	}()
	var pid int
	for deadline := time.Now().Add(30 * time.Second); pid == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the program did not start its child within 30 s")
		}
		b, err := os.ReadFile(pidFile)
		if err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	t.Cleanup(func() {
		if proctest.Alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	cancel()
	select {
	case r := <-done:
		if r.code != exitInterrupted {
			t.Errorf("exit %d, stderr %q; want %d", r.code, r.stderr, exitInterrupted)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("validate --exec still runs 5 s after Ctrl-C")
	}
	for deadline := time.Now().Add(2 * time.Second); proctest.Alive(pid); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the program's child (pid %d) still runs 2 s after validate --exec ended", pid)
		}
	}
}
