//go:build unix

// Package cputime reads the process's CPU time, for benchmarks that report
// it beside wall time.
package cputime

import (
	"syscall"
	"time"
)

// Used is the user+system CPU time this process has used so far; 0 if it
// cannot be read.
func Used() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
