package fit

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/retrysim/retrysim/kinds"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// PresetFit is how well a built-in preset (retrysim list) explains the
// log: the share of the logged backoffs inside the waits the preset draws,
// retry number by retry number, and whether its attempt limit agrees with
// the log's.
type PresetFit struct {
	Name            string
	Inside, Samples int
	// MaxAttempts is the preset's limit (0: none); AttemptsAgree is false
	// when an operation made more attempts than it allows, or when some
	// gave up for attempts after other than its limit.
	MaxAttempts   int
	AttemptsAgree bool
	// Width is the mean, over the retry numbers logged, of the preset's
	// range as a share of its top (0: exact waits, 1: from 0 up).
	Width float64
	// Coordination describes the preset's coordinators ("" for none).
	Coordination string
}

// Share is the share of the logged backoffs inside the preset's ranges.
func (p PresetFit) Share() float64 { return float64(p.Inside) / float64(max(p.Samples, 1)) }

// Same reports whether the log cannot tell p from q: the same backoffs
// inside their ranges, as wide, and the same attempt limit.
func (p PresetFit) Same(q PresetFit) bool {
	return p.Inside == q.Inside && p.MaxAttempts == q.MaxAttempts && math.Abs(p.Width-q.Width) < 0.01
}

// presetDraws is how many waits are drawn per retry number to find a
// preset's range.
const presetDraws = 2000

// NearestPresets scores every built-in preset against the log, best
// first: those whose attempt limit agrees, then by the share of logged
// backoffs in their ranges (to a percentage point), then by the narrower
// ranges. A preset's range before retry n is the least and most of
// presetDraws waits drawn from its backoff (each draw after the one
// before it, as decorrelated jitter needs), widened by 1 % and 1 ms.
func (r *Result) NearestPresets() ([]PresetFit, error) {
	var out []PresetFit
	for _, t := range kinds.PolicyTypes() {
		p, err := presetPolicy(t.Name)
		if err != nil {
			return nil, err
		}
		if shape, ok := kinds.ShapeOf(p.Rules.Backoff); !ok || shape.Kind == t.Name {
			continue // a backoff kind, not a preset
		}
		f := PresetFit{Name: t.Name, MaxAttempts: p.Rules.MaxAttempts, Coordination: kinds.DescribeCoordination(p)}
		f.AttemptsAgree = f.MaxAttempts == 0 || r.MaxAttempt <= f.MaxAttempts
		if r.GaveUp["attempts"] > 0 && r.MaxAttempt != f.MaxAttempts {
			f.AttemptsAgree = false
		}
		var lo, hi [maxRetries]time.Duration
		rng := rand.New(rand.NewPCG(1, 2))
		for k := range presetDraws {
			prev := time.Duration(0)
			for n := range maxRetries {
				d := p.Rules.Backoff.Delay(n, prev, rng)
				if k == 0 || d < lo[n] {
					lo[n] = d
				}
				hi[n] = max(hi[n], d)
				prev = d
			}
		}
		retries := 0
		for n := range r.backoffs {
			b := &r.backoffs[n]
			if len(b.all) == 0 {
				continue
			}
			retries++
			if hi[n] > 0 {
				f.Width += float64(hi[n]-lo[n]) / float64(hi[n])
			}
			l, h := lo[n]-lo[n]/100-time.Millisecond, hi[n]+hi[n]/100+time.Millisecond
			for _, w := range b.all {
				f.Samples++
				if w >= l && w <= h {
					f.Inside++
				}
			}
		}
		f.Width /= float64(max(retries, 1))
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b PresetFit) int {
		if a.AttemptsAgree != b.AttemptsAgree {
			if a.AttemptsAgree {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(math.Round(100*b.Share()), math.Round(100*a.Share())); c != 0 {
			return c
		}
		return cmp.Compare(a.Width, b.Width)
	})
	return out, nil
}

// presetPolicy is the policy a scenario file's {name: NAME} policy of
// type NAME is.
func presetPolicy(name string) (*sim.Policy, error) {
	y := fmt.Sprintf("scenarios:\n  - name: presets\n    server: {phases: [{admit: 1, window: 1s}]}\n    clients: {count: 1, deadline: 1000h}\n    policies:\n      - {name: p, type: %s}\n", name)
	f, err := scenarios.Parse("preset "+name, []byte(y))
	if err != nil {
		return nil, err
	}
	return &f.Scenarios[0].Policies[0], nil
}

// describePresets says, for the file's comments, which preset fits best
// and how well, those the log cannot tell from it, and the runners-up.
func describePresets(fits []PresetFit, logMax int, samples int) []string {
	if samples == 0 || len(fits) == 0 {
		return []string{"no preset is matched: the log shows no backoff"}
	}
	about := func(f PresetFit) string {
		limit := fmt.Sprintf("at most %d attempts", f.MaxAttempts)
		if f.MaxAttempts == 0 {
			limit = "no attempt limit"
		}
		s := fmt.Sprintf("%s (%.1f%% of the logged backoffs in its ranges; %s", f.Name, 100*f.Share(), limit)
		if !f.AttemptsAgree {
			s += ", which the log's attempts contradict"
		}
		return s + ")"
	}
	best := fits[0]
	lead := "the nearest preset"
	if best.Share() < 0.5 || !best.AttemptsAgree {
		lead = "no preset fits well; the nearest"
	}
	lines := []string{fmt.Sprintf("%s is %s; operations made at most %d attempts", lead, about(best), logMax)}
	if best.Coordination != "none" {
		lines = append(lines, "its coordination: "+best.Coordination)
	}
	var twins, next []string
	for _, f := range fits[1:] {
		switch {
		case best.Same(f):
			twins = append(twins, f.Name)
		case len(next) < 3:
			next = append(next, about(f))
		}
	}
	if len(twins) > 0 {
		lines = append(lines, "the log cannot tell it from "+strings.Join(twins, ", ")+" (the same waits and limit; they differ in what the log does not show, such as the server-wait rule or coordination)")
	}
	if len(next) > 0 {
		lines = append(lines, "next: "+strings.Join(next, "; "))
	}
	return lines
}
