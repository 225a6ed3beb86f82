package scenarios

import (
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

const worldYAML = `scenarios:
  - name: w
    seed: 1
    server:
      response_time: 100ms
      phases:
        - duration: 2s
          reject: overloaded
        - admit: 6
          window: 1s
          reject: overloaded
    clients:
      count: 20
      max_attempts: 8
      deadline: 20s
    policies:
      - name: capped-exponential
        base: 500ms
        cap: 8s
`

func worldOf(t *testing.T, yaml string) *Scenario {
	t.Helper()
	f, err := Parse("w.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return f.Scenarios[0]
}

// The world is the server, workload and incident after defaults: the
// same in another layout, with comments, with other policies or another
// seed; another when the server or the workload changes, and
// CompareWorlds names what changed.
func TestWorld(t *testing.T) {
	s := worldOf(t, worldYAML)
	want := []string{
		"server = sim.CapacityWindows",
		"server.phases = 2 entries",
		"server.phases[0].duration = 2s",
		"server.phases[0].reject.status = 529",
		"server.phases[0].reject.class = capacity",
		"server.phases[1].admit = 6",
		"server.phases[1].window = 1s",
		"server.phases[1].reject.status = 529",
		"server.phases[1].reject.class = capacity",
		"server.response_time = sim.Fixed(100ms)",
		"workload = sim.Burst",
		"workload.clients = 20",
	}
	var got []string
	for _, st := range s.World() {
		got = append(got, st.String())
		if back, err := ParseSetting(st.String()); err != nil || back != st {
			t.Errorf("ParseSetting(%q) = %v, %v", st, back, err)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("World:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	same := map[string]string{
		"comments and layout": strings.NewReplacer("response_time: 100ms", "response_time: 100ms   # every response",
			"      phases:\n", "\n      phases:   # two\n").Replace(worldYAML),
		"another policy":    strings.Replace(worldYAML, "base: 500ms", "base: 4s", 1) + "      - name: gated\n        throttle: {rate: 6}\n",
		"policy rules":      strings.NewReplacer("max_attempts: 8", "max_attempts: 3", "deadline: 20s", "deadline: 5s").Replace(worldYAML),
		"seed, description": strings.Replace(worldYAML, "seed: 1", "seed: 9\n    description: other words", 1),
	}
	for name, yaml := range same {
		if d := worldOf(t, yaml).Digest(); d != s.Digest() {
			t.Errorf("%s: digest %s, want %s", name, d, s.Digest())
		}
	}
	other := []struct{ name, from, to, change string }{
		{"outage", "duration: 2s", "duration: 30s", "server.phases[0].duration: 2s, now 30s"},
		{"clients", "count: 20", "count: 40", "workload.clients: 20, now 40"},
		{"spread", "count: 20", "count: 20\n      spread: 5s", "workload.spread: (none), now 5s"},
		{"response time", "response_time: 100ms", "response_time: {exponential: 100ms}", "server.response_time: sim.Fixed(100ms), now sim.Exponential"},
	}
	for _, o := range other {
		n := worldOf(t, strings.Replace(worldYAML, o.from, o.to, 1))
		if n.Digest() == s.Digest() {
			t.Errorf("%s: same digest", o.name)
		}
		changes := CompareWorlds(s.World(), n.World())
		if len(changes) == 0 || changes[0].String() != o.change {
			t.Errorf("%s: changes %v, want first %q", o.name, changes, o.change)
		}
	}
}

// The digest is a constant of the scenario: the same in every run, on
// any number of cores, concurrently. A change of this value means every
// recorded baseline of the scenario is refused by 'check' until it is
// recorded again: change it only with the encoding (WorldVersion) or a
// model that really changed.
func TestWorldDigestDeterministic(t *testing.T) {
	f, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.Lookup("overload-burst")
	if err != nil {
		t.Fatal(err)
	}
	const want = "sha256:ad3c8be840c89524f280c681fea0ce097ce0d44642adf129be1bb3c956fb60fb"
	if d := s.Digest(); d != want {
		t.Errorf("overload-burst digest %s, want %s", d, want)
	}
	for _, procs := range []int{1, 2} {
		prev := runtime.GOMAXPROCS(procs)
		var wg sync.WaitGroup
		digests := make([]string, 8)
		for i := range digests {
			wg.Go(func() {
				g, err := Builtin()
				if err != nil {
					t.Error(err)
					return
				}
				for _, s := range g.Scenarios {
					digests[i] += s.Digest()
				}
			})
		}
		wg.Wait()
		runtime.GOMAXPROCS(prev)
		for i := range digests {
			if digests[i] != digests[0] {
				t.Fatalf("GOMAXPROCS %d: the digests of the built-in scenarios differ between two loads", procs)
			}
		}
	}
	// Every built-in scenario has a world, and no two the same but for
	// those that share it on purpose.
	for _, s := range f.Scenarios {
		for _, st := range s.World() {
			if st.Value == "func" || st.Value == "chan" {
				t.Errorf("%s: %s is a %s, which a digest cannot hold", s.Name, st.Path, st.Value)
			}
		}
	}
}

// A list longer than maxListed is one setting: its length and a digest.
func TestWorldLongList(t *testing.T) {
	var b strings.Builder
	b.WriteString("scenarios:\n  - name: w\n    server:\n      phases:\n")
	for range 100 {
		b.WriteString("        - {duration: 1s, admit: 1, window: 1s}\n")
	}
	b.WriteString("        - {admit: 1, window: 1s}\n    clients: {count: 2, max_attempts: 2}\n    policies: [{name: immediate}]\n")
	s := worldOf(t, b.String())
	w := s.World()
	if len(w) > 10 || !slices.ContainsFunc(w, func(st Setting) bool {
		return st.Path == "server.phases" && strings.HasPrefix(st.Value, "101 entries, sha256:")
	}) {
		t.Errorf("world of 101 phases: %v", w)
	}
	n := worldOf(t, strings.Replace(b.String(), "{duration: 1s, admit: 1", "{duration: 1s, admit: 2", 1))
	if n.Digest() == s.Digest() {
		t.Error("a change in one of 101 phases keeps the digest")
	}
}
