// Package retrysim holds what the binary carries with it: the built-in
// scenarios. The tool itself lives in cmd/retrysim; the libraries in
// policies, sim, scenarios and report.
package retrysim

import _ "embed"

// BuiltinScenarios is scenarios.yaml as it was when the binary was built, so
// that a binary installed with go install needs no checkout beside it.
//
//go:embed scenarios.yaml
var BuiltinScenarios []byte
