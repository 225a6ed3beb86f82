package progress

import (
	"bytes"
	"os"
	"testing"
)

// Off a terminal the bar draws nothing at all.
func TestNoBarOffTerminal(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, 10_000, "runs")
	for range 10_000 {
		b.Add()
	}
	b.Done()
	if buf.Len() != 0 {
		t.Errorf("wrote %q to a buffer", buf.String())
	}
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b = New(f, 10_000, "runs")
	for range 10_000 {
		b.Add()
	}
	b.Done()
	if fi, _ := f.Stat(); fi.Size() != 0 {
		t.Errorf("wrote %d bytes to a file", fi.Size())
	}
	var nilBar *Bar
	nilBar.Add()
	nilBar.Done()
}
