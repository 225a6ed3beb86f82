package golden

import "testing"

func TestDiff(t *testing.T) {
	got := Diff("a\nb\nc\n", "a\nx\nc\n")
	want := " a\n-b\n+x\n c\n"
	if got != want {
		t.Errorf("Diff = %q, want %q", got, want)
	}
}
