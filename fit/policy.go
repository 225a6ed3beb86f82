package fit

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// PolicyFit is the retry policy the log supports: the backoff shape of the
// waits it logged (those without a server wait), the attempts per
// operation and the deadline.
type PolicyFit struct {
	// Type is a policy type of a scenario file (immediate,
	// capped-exponential, full-jitter, equal-jitter, sdk-jitter); "" when
	// the log shows no backoff.
	Type             string
	Delay, Base, Cap time.Duration
	Factor           float64
	MaxAttempts      int
	MaxAttemptsKnown bool // some operation gave up for attempts
	Deadline         time.Duration
	Inside, Samples  int // backoffs logged, and those in the fitted ranges
	Retries          int // retry numbers with backoffs logged
}

// FitPolicy fits a policy to the logged backoffs (see PolicyFit). The
// ceiling c(n) of retry n is its largest logged wait, or for full jitter
// (uniform below the ceiling) that times (k+1)/k for k waits; the base is
// c(0), the factor c(1)/c(0), the cap the largest c(n).
func (r *Result) FitPolicy() PolicyFit {
	p := PolicyFit{MaxAttempts: r.MaxAttempt, MaxAttemptsKnown: r.GaveUp["attempts"] > 0}
	if r.GaveUp["deadline"] > 0 {
		p.Deadline = r.deadlineSpent.Truncate(time.Second) + time.Second
	}
	var ns []*waits
	for i := range r.backoffs {
		if r.backoffs[i].n > 0 {
			ns = append(ns, &r.backoffs[i])
		}
	}
	if len(ns) == 0 {
		return p
	}
	p.Retries = len(ns)
	lo, hi := ns[0].min, ns[0].max
	jittered, ratio := false, 1.0
	for _, b := range ns {
		lo, hi = min(lo, b.min), max(hi, b.max)
		if b.max-b.min > time.Millisecond+b.max/100 {
			jittered = true
		}
		if b.n >= 5 && b.max > 0 {
			ratio = min(ratio, float64(b.min)/float64(b.max))
		}
	}
	ceil := func(b *waits) time.Duration {
		if p.Type == "full-jitter" {
			return time.Duration(float64(b.max) * float64(b.n+1) / float64(b.n))
		}
		return b.max
	}
	switch {
	case hi-lo <= time.Millisecond+hi/100:
		p.Type, p.Delay = "immediate", roundSignificant((hi+lo)/2)
	case !jittered:
		p.Type = "capped-exponential"
	case ratio >= 0.7:
		p.Type = "sdk-jitter"
	case ratio >= 0.4:
		p.Type = "equal-jitter"
	default:
		p.Type = "full-jitter"
	}
	if p.Type != "immediate" {
		p.Base = roundSignificant(ceil(ns[0]))
		p.Factor = 2
		if len(ns) > 1 && ns[0].n > 0 && ns[1].max > 0 && p.Base > 0 {
			p.Factor = max(1, math.Round(float64(ceil(ns[1]))/float64(ceil(ns[0]))*10)/10)
		}
		for _, b := range ns {
			p.Cap = max(p.Cap, roundSignificant(ceil(b)))
		}
		p.Cap = max(p.Cap, p.Base)
	}
	for n := range r.backoffs {
		b := &r.backoffs[n]
		lo, hi := p.Range(n)
		for _, w := range b.all {
			p.Samples++
			if w >= lo && w <= hi {
				p.Inside++
			}
		}
	}
	return p
}

// Range is the fitted policy's range of waits before retry n, with a
// tolerance of 1 % and 1 ms.
func (p PolicyFit) Range(n int) (lo, hi time.Duration) {
	c := p.ceiling(n)
	switch p.Type {
	case "immediate":
		lo, hi = p.Delay, p.Delay
	case "capped-exponential":
		lo, hi = c, c
	case "sdk-jitter":
		lo, hi = c*3/4, c
	case "equal-jitter":
		lo, hi = c/2, c
	default:
		lo, hi = 0, c
	}
	return lo - lo/100 - time.Millisecond, hi + hi/100 + time.Millisecond
}

// ceiling is c(n) = min(cap, base·factor^n).
func (p PolicyFit) ceiling(n int) time.Duration {
	c := float64(p.Base) * math.Pow(p.Factor, float64(n))
	return time.Duration(min(c, float64(p.Cap)))
}

// roundSignificant rounds d to two significant digits (500ms, 8s, 1.2s).
func roundSignificant(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	unit := time.Duration(math.Pow(10, math.Floor(math.Log10(float64(d)))-1))
	return max(d.Round(unit), time.Nanosecond)
}

// YAML is the policy as the items of a scenario file's policy mapping.
func (p PolicyFit) YAML() []string {
	var out []string
	switch p.Type {
	case "":
		out = append(out, "type: immediate")
	case "immediate":
		out = append(out, "type: immediate", fmt.Sprintf("delay: %v", p.Delay))
	default:
		out = append(out, "type: "+p.Type, fmt.Sprintf("base: %v", p.Base), fmt.Sprintf("factor: %s", trimFloat(p.Factor)), fmt.Sprintf("cap: %v", p.Cap))
	}
	return out
}

// Describe says how well the policy fits, for the file's comments.
func (p PolicyFit) Describe() string {
	var b strings.Builder
	switch {
	case p.Type == "":
		b.WriteString("no backoff was logged (no operation retried, or the log does not record waits)")
	default:
		fmt.Fprintf(&b, "%d of %d logged backoffs (%.1f%%) fall in this policy's ranges, over %d retry numbers",
			p.Inside, p.Samples, 100*float64(p.Inside)/float64(max(p.Samples, 1)), p.Retries)
	}
	return b.String()
}

func trimFloat(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", f), "0"), ".")
}
