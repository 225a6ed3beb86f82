//go:build !unix

package serve

import (
	"os"
	"os/exec"
)

// inOwnGroup does nothing here: cancelling kills the shell alone
// (exec.CommandContext's default), and WaitDelay bounds the wait for the
// pipes its children may hold.
func inOwnGroup(*exec.Cmd) {}

// killGroup has no group to kill here.
func killGroup(*exec.Cmd) error { return os.ErrProcessDone }
