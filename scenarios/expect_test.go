package scenarios

import (
	"strings"
	"testing"
)

const expectYAML = `scenarios:
  - name: s
    check_seeds: 10
    server:
      phases:
        - admit: 5
          window: 1s
    clients:
      count: 20
      max_attempts: 5
    policies:
      - name: full-jitter
        expect:
          - completed >= 18
          - "mean(amplification) <= 5"
      - name: immediate
        expect: ["gave_up == 0"]
`

func TestParseExpectations(t *testing.T) {
	f, err := Parse("e.yaml", []byte(expectYAML))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenarios[0]
	if s.CheckSeeds != 10 {
		t.Errorf("check_seeds = %d, want 10", s.CheckSeeds)
	}
	want := []struct {
		policy int
		text   string
		source string
		stat   Stat
	}{
		{0, "completed >= 18", "e.yaml:14:13", StatNone},
		{0, "mean(amplification) <= 5", "e.yaml:15:13", StatMean},
		{1, "gave_up == 0", "e.yaml:17:18", StatNone},
	}
	if len(s.Expect) != len(want) {
		t.Fatalf("got %d expectations, want %d", len(s.Expect), len(want))
	}
	for i, w := range want {
		e := &s.Expect[i]
		if e.Policy != w.policy || e.Text != w.text || e.Source() != w.source || e.Stat != w.stat {
			t.Errorf("expectation %d: policy %d %q at %s (stat %q); want policy %d %q at %s (stat %q)",
				i, e.Policy, e.Text, e.Source(), e.Stat, w.policy, w.text, w.source, w.stat)
		}
	}
}

func TestExpectationErrors(t *testing.T) {
	cases := []struct {
		name, from, to, want string
	}{
		{"unknown metric", "completed >= 18", "completd >= 18",
			`e.yaml:14:13: scenarios[0].policies[0].expect[0]: unknown metric "completd"`},
		{"bad operator", "completed >= 18", "completed => 18",
			`e.yaml:14:13: scenarios[0].policies[0].expect[0]: unknown operator "=>"`},
		{"bad number", "completed >= 18", "completed >= 18x",
			`e.yaml:14:13: scenarios[0].policies[0].expect[0]: cannot read "18x" as a number`},
		{"unknown statistic", `"mean(amplification) <= 5"`, `"avg(amplification) <= 5"`,
			`e.yaml:15:13: scenarios[0].policies[0].expect[1]: unknown statistic "avg"`},
		{"not a string", "completed >= 18", "18",
			`e.yaml:14:13: scenarios[0].policies[0].expect[0]: want an expectation such as`},
		{"mapping", "completed >= 18", "{completed: 18}",
			`e.yaml:14:13: scenarios[0].policies[0].expect[0]: want an expectation`},
		{"not a list", `expect: ["gave_up == 0"]`, `expect: gave_up == 0`,
			`e.yaml:17:17: scenarios[0].policies[1].expect: want a list`},
		{"statistic without check_seeds", "    check_seeds: 10\n", "",
			`e.yaml:14:13: scenarios[0].policies[0].expect[1]: mean(amplification) <= 5 is a statistic over seeds: set check_seeds`},
		{"check_seeds without a statistic", `"mean(amplification) <= 5"`, `"amplification <= 5"`,
			`e.yaml:3:18: scenarios[0].check_seeds: has no effect`},
		{"check_seeds zero", "check_seeds: 10", "check_seeds: 0",
			`e.yaml:3:18: scenarios[0].check_seeds: must be between 1 and 100000`},
	}
	for _, c := range cases {
		src := strings.Replace(expectYAML, c.from, c.to, 1)
		if src == expectYAML {
			t.Fatalf("%s: replacement did not apply", c.name)
		}
		_, err := Parse("e.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error\n  %v\nwant it to contain\n  %s", c.name, err, c.want)
		}
	}
}

// FuzzParseExpectations checks that no scenario file, expectations included, makes the
// loader panic, and that every error names the file.
func FuzzParseExpectations(f *testing.F) {
	f.Add(expectYAML)
	f.Add("scenarios: [{name: x, server: {phases: [{admit: 1, window: 1s}]}, clients: {count: 1, max_attempts: 1}, policies: [{name: immediate, expect: ['completed >= 1']}]}]")
	f.Fuzz(func(t *testing.T, src string) {
		file, err := Parse("f.yaml", []byte(src))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, s := range file.Scenarios {
			for _, e := range s.Expect {
				if e.Policy < 0 || e.Policy >= len(s.Policies) {
					t.Fatalf("expectation for policy %d of %d", e.Policy, len(s.Policies))
				}
				if e.OverSeeds() && s.CheckSeeds < 1 {
					t.Fatalf("statistic without check_seeds")
				}
			}
		}
	})
}

func TestBuiltinExpectations(t *testing.T) {
	f, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Scenarios {
		if len(s.Expect) == 0 {
			t.Errorf("built-in scenario %s has no expectations for 'retrysim check' to gate", s.Name)
		}
	}
	s, err := f.Lookup("huge-burst")
	if err != nil {
		t.Fatal(err)
	}
	if s.Operations() != 1_000_000 || len(s.Policies) != 1 || s.Policies[0].Name != "full-jitter" {
		t.Errorf("huge-burst is %d clients, policies %v; want 1,000,000 clients and full jitter", s.Operations(), s.Policies)
	}
}
