package sim

import "math/rand/v2"

// Random streams are derived from (seed, kind, id) so that adding an
// operation or a policy leaves every other stream as it was.
const (
	streamPolicy   uint64 = iota + 1 // one per operation: its policy's draws
	streamStart                      // one per operation: its start time
	streamServer                     // one per run: the server's draws
	streamWorkload                   // one per run: a workload's drawn starts and chain
	streamLayer                      // one per retry layer of a run (server_layer.go)
)

// newStream returns the PCG stream for (seed, kind, id).
func newStream(seed, kind, id uint64) rand.PCG {
	return *rand.NewPCG(splitmix(seed^splitmix(kind)), splitmix(id^splitmix(kind<<32)))
}

// splitmix is the SplitMix64 finaliser: it spreads nearby ids far apart.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// pcgSource lets one rand.Rand draw from whichever PCG is current, so
// operations keep separate streams without a rand.Rand each.
type pcgSource struct{ pcg *rand.PCG }

func (s *pcgSource) Uint64() uint64 { return s.pcg.Uint64() }
