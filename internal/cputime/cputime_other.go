//go:build !unix

// Package cputime reads the process's CPU time, for benchmarks that report
// it beside wall time.
package cputime

import "time"

// Used is not measured on this platform: always 0.
func Used() time.Duration { return 0 }
