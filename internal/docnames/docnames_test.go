package docnames

import "testing"

func TestDeclared(t *testing.T) {
	names, err := Declared(".")
	if err != nil {
		t.Fatal(err)
	}
	if !names["Declared"] || names["TestDeclared"] {
		t.Errorf("names %v: want Declared and no test names", names)
	}
	if _, err := Declared(t.TempDir()); err == nil {
		t.Error("an empty directory gave no error")
	}
}
