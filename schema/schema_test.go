package schema

import (
	"strings"
	"testing"
	"time"
)

// Finish with no fields lists those the decoder read, in the order it
// first asked for them, present or not.
func TestFinishListsWhatWasRead(t *testing.T) {
	d := &Decoder{File: "x.yaml"}
	doc := d.Document([]byte("a: 1\nb: 2s\nzz: 3\n"))
	m := d.Mapping(doc, "top")
	if got := m.Integer("a", 0, 0, 10); got != 1 {
		t.Fatalf("a = %d", got)
	}
	if got := m.Duration("b", 0); got != 2*time.Second {
		t.Fatalf("b = %v", got)
	}
	m.Has("c") // absent, but known
	m.Finish()
	want := "x.yaml:3:1: top.zz: unknown field (known fields: a, b, c)"
	if err := d.Err(); err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

// Anchors and aliases are refused before any mapping is decoded.
func TestDocumentRefusesAliases(t *testing.T) {
	d := &Decoder{File: "x.yaml"}
	if doc := d.Document([]byte("a: &x 1\nb: *x\n")); doc != nil {
		t.Fatal("a document with an alias was accepted")
	}
	err := d.Err()
	if err == nil || !strings.Contains(err.Error(), "x.yaml:1:4: anchors (&x) are not supported") ||
		!strings.Contains(err.Error(), "x.yaml:2:4: aliases (*x) are not supported") || d.mappings != 0 {
		t.Fatalf("err = %v after %d mappings", err, d.mappings)
	}
}
