package main

import (
	"strings"
	"testing"
)

// docs/playground.md's tables of the shared throttle switched off and on
// (the article's interaction) are what the commands above them print.
func TestSharedThrottleDocExample(t *testing.T) {
	for _, cmd := range []string{
		"retrysim compare --param shared_throttle=0",
		"retrysim compare --param shared_throttle=1",
	} {
		want := docExample(t, "playground.md", cmd)
		out, _, code, err := runCLI(t, strings.Fields(cmd)[1:]...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %v", cmd, code, err)
		}
		if out != want {
			t.Errorf("%s prints\n%s\ndocs/playground.md shows\n%s", cmd, out, want)
		}
	}
}
