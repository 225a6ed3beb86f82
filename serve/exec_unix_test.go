//go:build unix

package serve_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/proctest"
	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
)

// These run real programs, so they wait on the real clock; their limits
// only guard against a hang.

func execValidation(t *testing.T, command string) serve.ExecValidation {
	always529 := &sim.CapacityWindows{ResponseTime: sim.Fixed(time.Millisecond), Phases: []sim.Phase{{Reject: rejection529}}}
	return serve.ExecValidation{Model: always529, Clients: 1, Policy: preset(t, "anthropic-sdk-go"), Seed: 1, Seeds: 2, Speed: 1, Command: command}
}

// backgroundChild is a command whose shell starts a child that outlives
// 30 s and holds the output, writes the child's pid to a file (whole, by
// rename) and waits for it; it returns the command and a function that
// reads the pid once it is there.
func backgroundChild(t *testing.T) (string, func() int) {
	dir := t.TempDir()
	file := filepath.Join(dir, "child")
	command := "sleep 30 & echo $! > '" + file + ".tmp' && mv '" + file + ".tmp' '" + file + "'; wait"
	return command, func() int {
		var pid int
		waitFor(t, 10*time.Second, "the child's pid", func() bool {
			b, err := os.ReadFile(file)
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			return err == nil && pid > 0
		})
		t.Cleanup(func() {
			if proctest.Alive(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		})
		return pid
	}
}

// Cancelling Exec's context ends the program at once, and the child its
// shell started, which holds the output pipe. Before, only the shell was
// killed, and Exec waited on the pipe until the child ended (30 s later)
// and left it running.
func TestExecCancelEndsTheProgramsChildren(t *testing.T) {
	command, childPid := backgroundChild(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := serve.Exec(ctx, execValidation(t, command))
		done <- err
	}()
	pid := childPid()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Exec returned %v; want an error that wraps context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Exec still runs 5 s after its context was cancelled")
	}
	waitFor(t, 2*time.Second, "the child to end", func() bool { return !proctest.Alive(pid) })
}

// A failing program's output is kept in its error up to its last
// MaxExecErrorOutput bytes, saying how many came before: 64 MiB of output
// made a 64 MiB error.
func TestExecErrorKeepsTheOutputsTail(t *testing.T) {
	const written = 64 << 20
	_, err := serve.Exec(context.Background(), execValidation(t, "head -c "+strconv.Itoa(written)+" /dev/zero | tr '\\0' x; echo; echo the end; exit 3"))
	var ee *serve.ExecError
	if !errors.As(err, &ee) {
		t.Fatalf("Exec returned %v; want an *ExecError", err)
	}
	msg := err.Error()
	dropped := strconv.Itoa(written + len("\nthe end\n") - serve.MaxExecErrorOutput)
	if len(msg) > serve.MaxExecErrorOutput+1024 || !strings.Contains(msg, "exit status 3") ||
		!strings.Contains(msg, dropped+" bytes") || !strings.HasSuffix(msg, "xxx\nthe end\n") {
		head, tail := msg[:min(len(msg), 300)], msg[max(0, len(msg)-100):]
		t.Errorf("the error has %d bytes: %q ... %q; want at most %d, the exit status, %s bytes dropped and the output's end",
			len(msg), head, tail, serve.MaxExecErrorOutput+1024, dropped)
	}
}
