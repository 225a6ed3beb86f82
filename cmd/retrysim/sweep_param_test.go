package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// --param takes a list and a log scale as well as FROM:TO:STEP; a list runs
// exactly the points of the same range, and a log scale whose rounding
// merges values says so on stderr.
func TestSweepParamListAndLog(t *testing.T) {
	t.Parallel()
	values := func(args ...string) ([]float64, string) {
		t.Helper()
		out, errOut, code, _ := runCLI(t, append([]string{"sweep", "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d, %s", args, code, errOut)
		}
		var doc struct {
			Params []struct{ Values []float64 }
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Params) != 1 {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return doc.Params[0].Values, errOut
	}
	if got, _ := values("--param", "clients=10,20,50"); !reflect.DeepEqual(got, []float64{10, 20, 50}) {
		t.Errorf("clients=10,20,50 swept %v", got)
	}
	if got, _ := values("--param", "clients=10:1000:log5"); !reflect.DeepEqual(got, []float64{10, 32, 100, 316, 1000}) {
		t.Errorf("clients=10:1000:log5 swept %v", got)
	}
	got, errOut := values("--param", "clients=1:4:log10")
	if !reflect.DeepEqual(got, []float64{1, 2, 3, 4}) || !strings.Contains(errOut, "note: --param clients=1:4:log10: 10 log-spaced values round to 4 distinct ones") {
		t.Errorf("clients=1:4:log10 swept %v, stderr %q", got, errOut)
	}
	list, _, _, _ := runCLI(t, "sweep", "--param", "clients=10,20", "--format", "csv")
	rng, _, _, _ := runCLI(t, "sweep", "--param", "clients=10:20:10", "--format", "csv")
	if list != rng || list == "" {
		t.Errorf("clients=10,20 and clients=10:20:10 differ:\n%s\n%s", list, rng)
	}
	_, errOut, code, _ := runCLI(t, "sweep", "--param", "clients=50,10")
	if code != exitUsage || !strings.Contains(errOut, "list values must increase") {
		t.Errorf("clients=50,10: exit %d, %s", code, errOut)
	}
}
