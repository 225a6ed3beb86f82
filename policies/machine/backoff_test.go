package machine

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

const ms = time.Millisecond

func delays(b Backoff, n int, rng *rand.Rand) []time.Duration {
	var out []time.Duration
	prev := time.Duration(0)
	for i := range n {
		d := b.Delay(i, prev, rng)
		out = append(out, d)
		prev = d
	}
	return out
}

func TestDeterministicBackoffSequences(t *testing.T) {
	tests := []struct {
		name string
		b    Backoff
		want []time.Duration
	}{
		{"immediate", Constant{Wait: 100 * ms}, []time.Duration{100 * ms, 100 * ms, 100 * ms}},
		{"capped exponential 0.5s×2 cap 8s", Exponential{Base: 500 * ms, Factor: 2, Cap: 8 * time.Second},
			[]time.Duration{500 * ms, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second}},
		{"factor 1.5", Exponential{Base: 100 * ms, Factor: 1.5, Cap: time.Second},
			[]time.Duration{100 * ms, 150 * ms, 225 * ms, 337500 * time.Microsecond}},
		{"factor 1 stays at base", Exponential{Base: 300 * ms, Factor: 1, Cap: time.Second},
			[]time.Duration{300 * ms, 300 * ms, 300 * ms}},
		{"base above cap is capped", Exponential{Base: 5 * time.Second, Factor: 2, Cap: time.Second},
			[]time.Duration{time.Second, time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := delays(tt.b, len(tt.want), nil); !slices.Equal(got, tt.want) {
				t.Fatalf("delays %v, want %v", got, tt.want)
			}
		})
	}
}

func TestExponentialHugeRetryNumberStaysCapped(t *testing.T) {
	e := Exponential{Base: time.Nanosecond, Factor: 2, Cap: time.Hour}
	if d := e.Delay(1_000_000, 0, nil); d != time.Hour {
		t.Fatalf("retry 1e6: %v, want the cap", d)
	}
}

// Each jittered backoff must stay inside its documented range for every
// retry, and the same seed must give the same draws.
func TestJitteredBackoffRanges(t *testing.T) {
	base, limit := 500*ms, 8*time.Second
	ceil := func(n int) time.Duration { return min(limit, base<<n) }
	tests := []struct {
		name   string
		b      Backoff
		inside func(n int, prev, d time.Duration) bool
	}{
		{"full jitter [0, c)", FullJitter{Base: base, Factor: 2, Cap: limit},
			func(n int, _, d time.Duration) bool { return d >= 0 && d < ceil(n) }},
		{"equal jitter [c/2, c)", EqualJitter{Base: base, Factor: 2, Cap: limit},
			func(n int, _, d time.Duration) bool { return d >= ceil(n)/2 && d < ceil(n) }},
		{"sdk jitter (0.75c, c]", SDKJitter{Base: base, Factor: 2, Cap: limit},
			func(n int, _, d time.Duration) bool { return d > ceil(n)*3/4 && d <= ceil(n) }},
		{"added jitter [c, 1.25c)", AddedJitter{Base: base, Factor: 2, Cap: limit},
			func(n int, _, d time.Duration) bool { return d >= ceil(n) && d < ceil(n)*5/4 }},
		{"decorrelated min(cap, [base, 3·prev))", DecorrelatedJitter{Base: base, Cap: limit},
			func(_ int, prev, d time.Duration) bool {
				return d >= base && d <= limit && d < 3*max(prev, base)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 7))
			for trial := range 200 {
				prev := time.Duration(0)
				for n := range 8 {
					d := tt.b.Delay(n, prev, rng)
					if !tt.inside(n, prev, d) {
						t.Fatalf("trial %d retry %d (prev %v): delay %v out of range", trial, n, prev, d)
					}
					prev = d
				}
			}
			a := delays(tt.b, 8, rand.New(rand.NewPCG(3, 4)))
			b := delays(tt.b, 8, rand.New(rand.NewPCG(3, 4)))
			c := delays(tt.b, 8, rand.New(rand.NewPCG(5, 6)))
			if !slices.Equal(a, b) {
				t.Fatalf("same seed gave %v and %v", a, b)
			}
			if slices.Equal(a, c) {
				t.Fatalf("different seeds gave the same draws %v", a)
			}
		})
	}
}

// Full jitter's draws must spread over the whole range, not cluster: the mean
// of many draws from [0, c) is close to c/2.
func TestFullJitterIsUniformOnAverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	f := FullJitter{Base: time.Second, Factor: 2, Cap: time.Second}
	var sum time.Duration
	const n = 20000
	for range n {
		sum += f.Delay(0, 0, rng)
	}
	mean := sum / n
	if mean < 490*ms || mean > 510*ms {
		t.Fatalf("mean of %d draws from [0, 1s) is %v, want about 500ms", n, mean)
	}
}

// A backoff without a Cap is not a tight loop: Cap <= 0 means MaxDelay, and a
// Factor below 1 counts as 1.
func TestBackoffWithoutCap(t *testing.T) {
	s := time.Second
	for _, tt := range []struct {
		name  string
		b     Backoff
		retry int
		want  time.Duration
	}{
		{"exponential, no cap", Exponential{Base: s, Factor: 2}, 3, 8 * s},
		{"exponential, negative cap", Exponential{Base: s, Factor: 2, Cap: -1}, 0, s},
		{"exponential, no cap, huge retry", Exponential{Base: s, Factor: 2}, 1 << 20, MaxDelay},
		{"exponential, base above no cap", Exponential{Base: 48 * time.Hour, Factor: 2}, 0, MaxDelay},
		{"exponential, factor 0", Exponential{Base: s, Cap: 10 * s}, 5, s},
		{"exponential, factor below 1", Exponential{Base: s, Factor: 0.5, Cap: 10 * s}, 5, s},
		{"decorrelated, no cap, first retry is base", DecorrelatedJitter{Base: s}, 0, -1},
	} {
		got := tt.b.Delay(tt.retry, 0, rand.New(rand.NewPCG(1, 2)))
		if tt.want >= 0 && got != tt.want {
			t.Errorf("%s: Delay(%d) = %v, want %v", tt.name, tt.retry, got, tt.want)
		}
		if tt.want < 0 && (got < s || got >= 3*s) {
			t.Errorf("%s: Delay(%d) = %v, want in [1s, 3s)", tt.name, tt.retry, got)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, b := range []Backoff{FullJitter{Base: s, Factor: 2}, EqualJitter{Base: s, Factor: 2}, SDKJitter{Base: s, Factor: 2}} {
		var sum time.Duration
		for range 100 {
			d := b.Delay(3, 0, rng)
			if d < 0 || d > 8*s {
				t.Fatalf("%#v: Delay(3) = %v, want in [0, 8s]", b, d)
			}
			sum += d
		}
		if sum == 0 {
			t.Errorf("%#v without a cap waits 0 every time", b)
		}
	}
	// Decorrelated jitter without a cap neither overflows nor goes negative.
	if d := (DecorrelatedJitter{Base: s}).Delay(0, time.Duration(1<<62), rand.New(rand.NewPCG(1, 2))); d < s || d > MaxDelay {
		t.Errorf("decorrelated after a huge prev: %v", d)
	}
}

// A factor just above 1 with a huge retry number must cost O(log n), not
// O(n) multiplications, and still reach the cap.
func TestCeilingWithFactorNearOne(t *testing.T) {
	f := FullJitter{Base: time.Nanosecond, Factor: 1.000001, Cap: 1000 * time.Hour}
	e := Exponential{Base: time.Nanosecond, Factor: 1.000001, Cap: 1000 * time.Hour}
	if d := e.Delay(1<<40, 0, nil); d != 1000*time.Hour {
		t.Fatalf("retry 2^40: %v, want the cap", d)
	}
	if d := e.Delay(1000, 0, nil); d != time.Nanosecond {
		t.Fatalf("retry 1000: %v, want 1ns (1.000001^1000 ≈ 1.001)", d)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for n := range 100 {
		if d := f.Delay(n<<30, 0, rng); d < 0 || d >= 1000*time.Hour {
			t.Fatalf("full jitter out of range: %v", d)
		}
	}
}

// Decorrelated jitter is AWS's min(cap, U[base, 3·prev)): with the previous
// wait at the cap, two thirds of the draws (3·cap − cap of 3·cap − base,
// base near 0) are at or above the cap and wait exactly the cap, so the
// mean is about cap·(1/3·1/2 + 2/3) = 0.833·cap, not the U[base, cap) mean.
func TestDecorrelatedJitterCutsAtTheCap(t *testing.T) {
	b := DecorrelatedJitter{Base: time.Millisecond, Cap: time.Second}
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 20000
	var sum time.Duration
	atCap := 0
	for range n {
		d := b.Delay(5, time.Second, rng)
		if d < b.Base || d > b.Cap {
			t.Fatalf("delay %v outside [base, cap]", d)
		}
		if d == b.Cap {
			atCap++
		}
		sum += d
	}
	wantShare := (3.0 - 1) / (3.0 - 0.001)
	if share := float64(atCap) / n; share < wantShare-0.02 || share > wantShare+0.02 {
		t.Errorf("%.3f of the draws wait the cap, want about %.3f", share, wantShare)
	}
	mean := (sum / n).Seconds()
	if mean < 0.82 || mean > 0.85 {
		t.Errorf("mean %.3f s with the previous wait at the 1 s cap, want about 0.833 s", mean)
	}
}
