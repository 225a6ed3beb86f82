//go:build !race

// Package racetest tells tests whether they run under the race detector, so
// that single-goroutine giants (long simulations, PNG rendering), which the
// detector slows several times over and learns nothing from, can shrink
// there. The plain 'go test' runs them whole; .ci/run runs both.
package racetest

// Enabled is true when the race detector is on.
const Enabled = false
