package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/retrysim/retrysim/clients/go/harness"
	"github.com/retrysim/retrysim/internal/golden"
)

// runCLI runs the command line in-process, as main would, and returns
// stdout, stderr (with the error main would print), the exit code main
// would use and the error run returned. It is the one runner of the tests.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int, err error) {
	t.Helper()
	return runCLIContext(t, context.Background(), args...)
}

// runCLIContext is runCLI with a context, e.g. one already cancelled.
func runCLIContext(t *testing.T, ctx context.Context, args ...string) (stdout, stderr string, code int, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(ctx, append([]string{"retrysim"}, args...), &out, &errOut)
	code = exitCode(err, &errOut)
	return out.String(), errOut.String(), code, err
}

// checkGolden compares stdout with testdata/name.golden and stderr with
// testdata/name.stderr.golden ('go test -update' rewrites both).
func checkGolden(t *testing.T, name, stdout, stderr string) {
	t.Helper()
	golden.Check(t, name, []byte(stdout))
	golden.Check(t, name+".stderr", []byte(stderr))
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// builtBinary builds retrysim once per test binary and returns its path.
// The binary is built without -race whatever the tests run with.
func builtBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "retrysim-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "retrysim")
		if runtime.GOOS == "windows" {
			binPath += ".exe"
		}
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	if os.Getenv("RETRYSIM_TEST_HARNESS") == "1" {
		// validate --exec's program in TestValidateExecJSON.
		if err := harness.Run(context.Background(), os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
