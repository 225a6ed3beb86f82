package main

import (
	"strings"
	"testing"
)

// show --policy --for prints the code on stdout and what it leaves out on
// stderr; a target, policy or scenario that does not exist is bad input.
func TestShowPolicyFor(t *testing.T) {
	t.Parallel()
	out, errOut, code, _ := runCLI(t, "show", "--scenario", "controls-outage", "--policy", "breaker", "--for", "openai-node")
	if code != 0 || !strings.Contains(out, "export async function withRetries") || !strings.Contains(out, "maxRetries: 0") {
		t.Errorf("breaker for openai-node: exit %d, stdout:\n%s", code, out)
	}
	if !strings.Contains(errOut, "does not express, of breaker:\n  - a circuit breaker") {
		t.Errorf("breaker for openai-node: stderr %q, want the circuit breaker named", errOut)
	}
	out, errOut, code, _ = runCLI(t, "show", "--file", docsRoot+"/.ci/sdk-scenarios.yaml", "--scenario", "always-529", "--policy", "anthropic-sdk-typescript", "--for", "anthropic-typescript")
	if code != 0 || !strings.Contains(out, "maxRetries: 2") || strings.Contains(out, "withRetries") || !strings.Contains(errOut, "own retries run") {
		t.Errorf("the TypeScript SDK's preset for its own SDK: exit %d, stdout:\n%s\nstderr %q", code, out, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"show", "--policy", "gated", "--for", "cobol"}, `--for: unknown target "cobol"`},
		{[]string{"show", "--policy", "nope", "--for", "go"}, `--policy "nope"`},
		{[]string{"show", "--policy", "gated"}, "--policy and --for go together"},
		{[]string{"show", "--scenario", "nope", "--policy", "gated", "--for", "go"}, "nope"},
		{[]string{"show", "overload-burst", "--policy", "gated", "--for", "go"}, "takes no arguments"},
	} {
		if _, errOut, code, _ := runCLI(t, c.args...); code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", c.args, code, errOut, c.want)
		}
	}
}
