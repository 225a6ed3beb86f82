//go:build unix

// Package proctest tells tests whether a process they started, or one it
// started, still runs.
package proctest

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// Alive reports whether process pid exists and is not a zombie (killed
// but not yet reaped by whoever adopted it).
func Alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: trust kill
	}
	i := bytes.LastIndexByte(stat, ')') // after the command's name, which may hold anything
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
