package compare

import (
	"strings"
	"testing"

	"github.com/retrysim/retrysim/scenarios"
)

// TestSet: a parameter is set on a copy, the scenario itself is left as it
// was, and a value the loader would refuse is refused with the field.
func TestSet(t *testing.T) {
	f, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.Lookup("overload-burst")
	if err != nil {
		t.Fatal(err)
	}
	if same, err := Set(s, nil); err != nil || same != s {
		t.Fatalf("no specs: %v, %v", same, err)
	}
	before := s.Operations()
	c, err := Set(s, []string{"clients=7"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Operations() != 7 || s.Operations() != before {
		t.Fatalf("copy has %d operations, the scenario %d (was %d)", c.Operations(), s.Operations(), before)
	}
	if _, err := Set(s, []string{"cap=1ns"}); err == nil || !strings.Contains(err.Error(), "cap") || !strings.Contains(err.Error(), "must be at least base") {
		t.Fatalf("cap below base: %v", err)
	}
}
