package scenarios

import (
	"strings"
	"testing"
)

// A misspelt field, kind, preset or metric is answered with the name
// nearest to it.
func TestMisspeltNamesGetASuggestion(t *testing.T) {
	const ok = `scenarios:
  - name: s
    server: {phases: [{admit: 5, window: 1s}]}
    clients: {count: 10, max_attempts: 3}
    policies: [{name: p, type: full-jitter, base: 100ms}]
`
	for _, tc := range []struct{ from, to, want string }{
		{"base: 100ms", "bsae: 100ms", `policies[0].bsae: unknown field; did you mean "base"?`},
		{"type: full-jitter", "type: full-jiter", `unknown policy type "full-jiter" (did you mean "full-jitter"?)`},
		{"type: full-jitter", "type: anthropic-skd", `unknown policy type "anthropic-skd" (did you mean "anthropic-sdk"?)`},
		{"{phases:", "{type: queu, phases:", `unknown server type "queu" (did you mean "queue"?)`},
		{"{count: 10", "{type: bursts, count: 10", `unknown workload type "bursts" (did you mean "burst"?)`},
		{"{admit: 5,", "{reject: overloded, admit: 5,", `unknown outcome "overloded" (did you mean "overloaded"?)`},
		{"base: 100ms}", "base: 100ms, expect: [\"complted >= 1\"]}", `unknown metric "complted" (did you mean "completed"?)`},
	} {
		bad := strings.Replace(ok, tc.from, tc.to, 1)
		_, err := Parse("x.yaml", []byte(bad))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.to, err, tc.want)
		}
	}
}
