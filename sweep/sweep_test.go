package sweep

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/internal/scenariotest"
	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

func TestParse(t *testing.T) {
	tests := []struct {
		spec string
		want []int64
	}{
		{"clients=10:50:10", []int64{10, 20, 30, 40, 50}},
		{"clients=10:45:10", []int64{10, 20, 30, 40}},
		{"clients=7", []int64{7}},
		{"base=100ms:300ms:100ms", []int64{1e8, 2e8, 3e8}},
		{"outage=0s:2s:1s", []int64{0, 1e9, 2e9}},
		{"capacity=0:0:1", []int64{0}},
		{"capacity=1:9223372036854775807:9223372036854775807", []int64{1}}, // no overflow past TO
		// Lists.
		{"clients=10,20,50", []int64{10, 20, 50}},
		{"base=100ms,1s,1m", []int64{1e8, 1e9, 60e9}},
		// Log scales: counts round to whole numbers, durations to three
		// significant digits; FROM and TO are kept exactly.
		{"clients=10:1000:log5", []int64{10, 32, 100, 316, 1000}},
		{"clients=1:2:log2", []int64{1, 2}},
		{"base=100ms:10s:log5", []int64{100e6, 316e6, 1e9, 3.16e9, 10e9}},
		{"base=1ns:1us:log4", []int64{1, 10, 100, 1000}},
		{"clients=1236:1237:log3", []int64{1236, 1237}},
		{"base=1234ns:1236ns:log3", []int64{1234, 1236}}, // 1235 rounds to 1240, past TO
		// Rounding merges values; the note says so.
		{"clients=1:4:log10", []int64{1, 2, 3, 4}},
		{"clients=5:5:log3", []int64{5}},
	}
	for _, tt := range tests {
		p, err := Parse(tt.spec)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.spec, err)
			continue
		}
		if !reflect.DeepEqual(p.Values, tt.want) {
			t.Errorf("Parse(%q) = %v, want %v", tt.spec, p.Values, tt.want)
		}
	}
}

// A log scale whose rounding merges values says so in Param.Note; one that
// merges none has no note.
func TestParseLogNote(t *testing.T) {
	p := mustParse(t, "clients=1:4:log10")
	if want := "clients=1:4:log10: 10 log-spaced values round to 4 distinct ones"; p.Note != want {
		t.Errorf("note %q, want %q", p.Note, want)
	}
	for _, spec := range []string{"clients=10:1000:log5", "clients=10,20", "clients=1:9:2"} {
		if p := mustParse(t, spec); p.Note != "" {
			t.Errorf("%s: note %q, want none", spec, p.Note)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ spec, want string }{
		{"clients", "want NAME=FROM:TO:STEP"},
		{"=1:2:1", "want NAME=FROM:TO:STEP"},
		{"speed=1:2:1", "unknown parameter \"speed\"; choose one of clients, capacity"},
		{"clients=1:2", "want clients=FROM:TO:STEP"},
		{"clients=a:2:1", "\"a\" is not a whole number"},
		{"base=100:200:100", "is not a duration"},
		{"clients=10:5:1", "TO must not be below FROM"},
		{"clients=1:5:0", "STEP must be > 0"},
		{"clients=0:5:1", "clients must be at least 1"},
		{"clients=1:100000:1", "at most 1000 per parameter"},
		{"base=0s:1s:100ms", "base must be at least 1ns"},
		{"clients=1:2:3:4", "want clients=FROM:TO:STEP, clients=FROM:TO:logN, clients=V1,V2,... or clients=VALUE"},
		{"clients=10,50,20", "list values must increase: 20 after 50"},
		{"clients=10,10", "list values must increase: 10 after 10"},
		{"clients=10,", "\"\" is not a whole number"},
		{"clients=0,1", "clients must be at least 1"},
		{"clients=10,x", "\"x\" is not a whole number"},
		{"base=1s,2", "\"2\" is not a duration"},
		{"clients=1:100:log", "want logN, N >= 2"},
		{"clients=1:100:log1", "want logN, N >= 2"},
		{"clients=1:100:logx", "want logN, N >= 2"},
		{"clients=1:100:log1001", "at most 1000 per parameter"},
		{"clients=100:10:log3", "TO must not be below FROM"},
		{"outage=0s:1s:log3", "a log scale needs FROM > 0"},
		{"clients=-5:10:log3", "a log scale needs FROM > 0"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) error %v, want one containing %q", tt.spec, err, tt.want)
		}
	}
}

func mustParse(t *testing.T, spec string) Param {
	t.Helper()
	p, err := Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Apply changes a copy: the loaded scenario stays as it was.
func TestApplyLeavesOriginal(t *testing.T) {
	s := scenariotest.Builtin(t, "overload-burst")
	windows := s.Server.(*sim.CapacityWindows)
	before := *windows
	phases := append([]sim.Phase(nil), windows.Phases...)
	pols := append([]sim.Policy(nil), s.Policies...)
	throttle := slices.Clone(s.Policies[3].Coordinators) // shared by pols
	all := []string{"clients=5", "capacity=9", "base=1s", "delay=1s", "outage=5s", "response_time=1s", "throttle=2", "max_attempts=3", "deadline=1s"}
	for _, spec := range all {
		p := mustParse(t, spec)
		if _, err := Apply(s, []Param{p}, p.Values); err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
	}
	if !reflect.DeepEqual(phases, windows.Phases) || before.ResponseTime != windows.ResponseTime ||
		!reflect.DeepEqual(pols, s.Policies) || !reflect.DeepEqual(throttle, s.Policies[3].Coordinators) || s.Operations() != 20 {
		t.Error("Apply changed the original scenario")
	}
}

func TestApplySetsFields(t *testing.T) {
	s := scenariotest.Builtin(t, "overload-burst")
	get := func(spec string) *scenarios.Scenario {
		p := mustParse(t, spec)
		c, err := Apply(s, []Param{p}, p.Values)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		return c
	}
	server := func(c *scenarios.Scenario) *sim.CapacityWindows { return c.Server.(*sim.CapacityWindows) }
	if c := get("clients=7"); c.Operations() != 7 {
		t.Error("clients not set")
	}
	if c := server(get("capacity=9")); c.Phases[1].Admit != 9 || c.Phases[1].Window != time.Second {
		t.Error("capacity not set on the last phase")
	}
	if c := server(get("outage=5s")); c.Phases[0].Duration != 5*time.Second {
		t.Error("outage not set")
	}
	if c := server(get("outage=0s")); len(c.Phases) != 1 || c.Phases[0].Admit != 6 {
		t.Error("outage=0 should drop the first phase")
	}
	if c := server(get("response_time=250ms")); c.ResponseTime != sim.Fixed(250*time.Millisecond) {
		t.Error("response time not set")
	}
	c := get("base=1s")
	if b := c.Policies[1].Rules.Backoff.(policies.Exponential); b.Base != time.Second {
		t.Error("base not set on capped-exponential")
	}
	if b := c.Policies[0].Rules.Backoff.(policies.Constant); b.Wait != 100*time.Millisecond {
		t.Error("base changed immediate's fixed delay")
	}
	if c := get("delay=1s"); c.Policies[0].Rules.Backoff.(policies.Constant).Wait != time.Second {
		t.Error("delay not set")
	}
	if c := get("throttle=2"); c.Policies[3].Coordinators[1] != (machine.ThrottleConfig{Count: 2, Per: time.Second}) {
		t.Error("throttle not set")
	}
}

func TestApplyErrors(t *testing.T) {
	s := scenariotest.Builtin(t, "overload-burst")
	one := *s
	one.Server = &sim.CapacityWindows{Phases: s.Server.(*sim.CapacityWindows).Phases[1:], ResponseTime: s.Server.(*sim.CapacityWindows).ResponseTime}
	one.Policies = s.Policies[:3]
	for _, spec := range []string{"outage=1s", "throttle=3"} {
		p := mustParse(t, spec)
		if _, err := Apply(&one, []Param{p}, p.Values); err == nil {
			t.Errorf("%s on a scenario without it: no error", spec)
		}
	}
}

func TestParseRejectsDurationsPastTheScenarioLimit(t *testing.T) {
	if _, err := Parse("outage=0s:2000h:1000h"); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("err = %v", err)
	}
}

// Parse never panics, and what it accepts is a usable axis: 1 to MaxValues
// increasing values within the parameter's bounds.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"clients=10:50:10", "clients=10,20,50", "clients=10:1000:log5", "base=100ms:10s:log5",
		"outage=0s:2s:1s", "clients=1:4:log10", "base=1ns:1us:log4", "capacity=1:9223372036854775807:9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		p, err := Parse(spec)
		if err != nil {
			return
		}
		if len(p.Values) == 0 || len(p.Values) > MaxValues {
			t.Fatalf("%q: %d values", spec, len(p.Values))
		}
		for i, v := range p.Values {
			if v < p.info.Min || v > p.info.Max || i > 0 && v <= p.Values[i-1] {
				t.Fatalf("%q: values %v out of order or bounds [%d, %d]", spec, p.Values, p.info.Min, p.info.Max)
			}
		}
	})
}

// A field's path is a parameter: its values take the unit they are
// written in, and each point's scenario holds its value, as the loader
// reads it.
func TestParsePath(t *testing.T) {
	s := scenariotest.Builtin(t, "overload-burst")
	for _, tc := range []struct {
		spec   string
		labels []string
		field  string
	}{
		{"server.phases[1].duration=1m:3m:1m", []string{"1m0s", "2m0s", "3m0s"}, "server.phases[1].duration"},
		{"policies[full-jitter].cap=30s", []string{"30s"}, "policies[2].cap"},
		{"clients.count=10,40", []string{"10", "40"}, "clients.count"},
		{"policies[capped-exponential].factor=1.5,2.5", []string{"1.5", "2.5"}, "policies[1].factor"},
	} {
		p, err := Parse(tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		if !p.IsPath() || len(p.Values) != len(tc.labels) {
			t.Fatalf("%s: %d values, path %v", tc.spec, len(p.Values), p.IsPath())
		}
		if err := Validate(s, []Param{p}); err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		for i, want := range tc.labels {
			if p.Label(i) != want {
				t.Errorf("%s: value %d is %s, want %s", tc.spec, i, p.Label(i), want)
			}
			c, err := Apply(s, []Param{p}, []int64{p.Values[i]})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, fl := range c.Fields() {
				if fl.Path == tc.field && fl.Node != nil {
					found = true
					if fl.Node.Value != want && !(strings.HasSuffix(want, "m0s") && fl.Node.Value == want) {
						if d, err := time.ParseDuration(fl.Node.Value); err != nil || d.String() != want {
							t.Errorf("%s: the scenario holds %s, want %s", tc.spec, fl.Node.Value, want)
						}
					}
				}
			}
			if !found {
				t.Errorf("%s: no field %s after setting it", tc.spec, tc.field)
			}
		}
	}
	// Refused as the loader refuses the file, naming the field.
	p, err := Parse("policies[full-jitter].factor=0.5")
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(s, []Param{p}); err == nil || !strings.Contains(err.Error(), "policies[2].factor") {
		t.Errorf("factor 0.5: %v", err)
	}
	if _, err := Parse("clinets=4"); err == nil || !strings.Contains(err.Error(), `did you mean "clients"?`) {
		t.Errorf("a misspelt name: %v", err)
	}
}
