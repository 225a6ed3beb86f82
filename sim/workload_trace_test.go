package sim

import (
	"strings"
	"testing"
	"time"
)

func TestArrivalsFromCSV(t *testing.T) {
	w, err := ArrivalsFromCSV(strings.NewReader("start,count\n0,2\n# quiet\n1.5,0\n2s,3\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{0, 0, 2 * time.Second, 2 * time.Second, 2 * time.Second}
	if len(w.Starts) != len(want) || w.Validate() != nil {
		t.Fatalf("starts %v, want %v", w.Starts, want)
	}
	for i := range want {
		if w.Starts[i] != want[i] || w.Start(i, nil) != want[i] {
			t.Errorf("start %d = %v, want %v", i, w.Starts[i], want[i])
		}
	}
	for in, msg := range map[string]string{"1,2\n": "line 1: the first row must start at 0", "0,1\n0.5,-1\n": "line 2: count", "0,x\n": "line 1"} {
		if _, err := ArrivalsFromCSV(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want %q", in, err, msg)
		}
	}
	if err := (&ArrivalTrace{}).Validate(); err == nil {
		t.Error("an empty trace validated")
	}
}
