//go:build unix

package serve

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// inOwnGroup starts cmd in a process group of its own (whose id is the
// shell's pid), so that cancelling its context kills the shell and
// everything it started, not the shell alone.
func inOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
}

// killGroup kills cmd's process group; os.ErrProcessDone if it is empty.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return os.ErrProcessDone
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}
