package sim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The portable functions agree with the math package to a few ulp. (For
// subnormals, math.Log on amd64 is off: ln(5e-324) is -744.44, it says -709.09.)
func TestPortableExpLog(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	close := func(got, want float64) bool {
		if got == want {
			return true
		}
		return math.Abs(got-want) <= 4e-16*math.Abs(want)
	}
	for range 100_000 {
		x := math.Ldexp(rng.Float64()+0.5, rng.IntN(200)-100)
		if got, want := portableLog(x), math.Log(x); !close(got, want) && math.Abs(got-want) > 1e-300 {
			t.Fatalf("log(%v) = %v, want %v", x, got, want)
		}
		y := (rng.Float64() - 0.5) * 1400
		if got, want := portableExp(y), math.Exp(y); !close(got, want) {
			t.Fatalf("exp(%v) = %v, want %v", y, got, want)
		}
	}
	for _, c := range []struct{ x, log float64 }{{1, 0}, {0, math.Inf(-1)}, {math.Inf(1), math.Inf(1)}, {5e-324, -744.4400719213812}} {
		if got := portableLog(c.x); !close(got, c.log) {
			t.Errorf("log(%v) = %v, want %v", c.x, got, c.log)
		}
	}
	if !math.IsNaN(portableLog(-1)) || portableExp(0) != 1 || portableExp(800) != math.Inf(1) || portableExp(-800) != 0 {
		t.Error("special values")
	}
}
