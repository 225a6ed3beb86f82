package machine

import (
	"math/rand/v2"
	"time"
)

// Randomised reports whether a policy's waits draw random numbers: its
// backoff gives different waits from two different sources, or a server
// wait gets jitter. The results of a randomised policy change from seed to
// seed, so one seed says little about it.
func Randomised(p Policy) bool {
	if p.ServerWaitJitter > 0 {
		return true
	}
	if p.Backoff == nil {
		return false
	}
	a, b := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(3, 4))
	prev := time.Duration(0)
	for retry := range 16 {
		da, db := p.Backoff.Delay(retry, prev, a), p.Backoff.Delay(retry, prev, b)
		if da != db {
			return true
		}
		prev = da
	}
	return false
}
