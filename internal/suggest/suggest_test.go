package suggest

import "testing"

func TestClosest(t *testing.T) {
	names := []string{"clients", "capacity", "base", "delay", "max_attempts", "full-jitter", "shared-key-agents"}
	for _, c := range []struct{ got, want string }{
		{"client", "clients"},           // a letter missing
		{"capactiy", "capacity"},        // two letters swapped
		{"max_attempt", "max_attempts"}, // one letter missing from a long name
		{"Base", "base"},                // case
		{"full_jitter", "full-jitter"},
		{"shared-key-agent", "shared-key-agents"},
		{"xyz", ""},      // nothing near
		{"bass", "base"}, // one letter of four
		{"ba", ""},       // too short to guess from two letters off
	} {
		if got := Closest(c.got, names); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.got, got, c.want)
		}
	}
	if got := DidYouMean("delya", names); got != ` (did you mean "delay"?)` {
		t.Errorf("DidYouMean = %q", got)
	}
}
