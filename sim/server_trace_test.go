package sim

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestCapacityTrace(t *testing.T) {
	const incident = `# an incident: half the workers for 10 s
start, concurrency
0, 10
20s, 5
30, 10
`
	got, err := WorkerPhasesFromCSV(strings.NewReader(incident))
	want := []WorkerPhase{{Duration: 20 * sec, Concurrency: 10}, {Duration: 10 * sec, Concurrency: 5}, {Concurrency: 10}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
	windows, err := WindowPhasesFromCSV(strings.NewReader("0,0\n2.5,6\n"), sec, overloaded)
	wantW := []Phase{{Duration: 2500 * ms, Admit: 0, Window: sec, Reject: overloaded}, {Admit: 6, Window: sec, Reject: overloaded}}
	if err != nil || !reflect.DeepEqual(windows, wantW) {
		t.Fatalf("got %v, %v; want %v", windows, err, wantW)
	}
	if q := (&Queue{Phases: got, Service: Fixed(ms)}); q.Validate() != nil {
		t.Fatal(q.Validate())
	}
}

// A byte order mark at the start, as Excel writes "CSV UTF-8", is skipped,
// before a header or a first row; anywhere else it is an error.
func TestCapacityTraceSkipsAByteOrderMark(t *testing.T) {
	want := []WorkerPhase{{Duration: 20 * sec, Concurrency: 10}, {Concurrency: 5}}
	for _, csv := range []string{"\ufeffstart,concurrency\r\n0,10\r\n20,5\r\n", "\ufeff0,10\n20s,5\n"} {
		got, err := WorkerPhasesFromCSV(strings.NewReader(csv))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %v, %v; want %v", csv, got, err, want)
		}
	}
	if _, err := WorkerPhasesFromCSV(strings.NewReader("0,10\n\ufeff20,5\n")); err == nil || !strings.Contains(err.Error(), "line 2: start") {
		t.Errorf("a mark inside the file: error %v", err)
	}
}

func TestCapacityTraceErrors(t *testing.T) {
	for _, tt := range []struct {
		csv, want string
	}{
		{"", "no rows"},
		{"start,admit\n", "no rows"},
		{"1s,5\n", "line 1: the first row must start at 0"},
		{"0,5\n2s,3\n2s,4\n", "line 3: start 2s is not after"},
		{"0,5\n# c\n3,x\n", `line 3: concurrency "x" is not a whole number`},
		{"0,5\n3,-1\n", "line 2: concurrency"},
		{"0,5\nsoon,1\n", `line 2: start "soon": not a duration`},
		{"0,5\n-1,1\n", "line 2: start \"-1\": must be between"},
		{"0,5\n5000h,1\n", "line 2: start \"5000h\": must be between"},
		{"0,5\n1,2,3\n", "line 2: wrong number of fields"},
		{"0,5\n1,0\n", "line 2: the last concurrency must be > 0"},
		{"0,5\n1,2000000\n", "line 2: concurrency 2000000 is more than"},
	} {
		_, err := WorkerPhasesFromCSV(strings.NewReader(tt.csv))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want one containing %q", tt.csv, err, tt.want)
		}
	}
	if _, err := WindowPhasesFromCSV(strings.NewReader("0,1\n"), 0, overloaded); err == nil {
		t.Error("a zero window was accepted")
	}
	if p, err := WindowPhasesFromCSV(strings.NewReader("0,1\n1m,0\n"), time.Second, overloaded); err != nil || p[1].Admit != 0 {
		t.Errorf("a trace ending in an outage: %v, %v", p, err)
	}
}

// Any input gives phases that validate, or an error; never a panic.
func FuzzCapacityTrace(f *testing.F) {
	for _, s := range []string{"0,1\n", "start,concurrency\n0,10\n20s,5\n30,10\n", "0,5\n1,2,3\n", "\"0\",1\n1e3,2\n", "\ufeffstart,concurrency\r\n0,10\r\n20,5\r\n", "\ufeff\ufeff0,1\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := WorkerPhasesFromCSV(strings.NewReader(s))
		if err != nil {
			return
		}
		if err := (&Queue{Phases: p, Service: Fixed(0)}).Validate(); err != nil {
			t.Fatalf("%q: phases %v do not validate: %v", s, p, err)
		}
	})
}
