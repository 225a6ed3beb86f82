package sim

import (
	"math/rand/v2"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// ServerModel describes a server: its rules, fixed for a whole run. A run
// asks it for fresh state (NewServer), so one model serves any number of
// runs, concurrently too. Adding a model is one new type implementing this
// interface; the engine does not know which model runs.
type ServerModel interface {
	// Validate reports the first problem that would make the model
	// meaningless.
	Validate() error
	// NewServer returns the state of one run; rng is the run's server
	// stream, its only source of randomness.
	NewServer(rng *rand.Rand) Server
}

// Server is a server model's state during one run: a state machine over
// virtual time. The engine calls it from one goroutine, with arrival times
// that never decrease.
type Server interface {
	// Arrive decides a request arriving at now and says what the client
	// receives and when.
	Arrive(now time.Duration, req Request) Response
}

// Request is an attempt as the server sees it.
type Request struct {
	// Fallback is true when the attempt calls the fallback model.
	Fallback bool
	// GiveUpAt, if > 0, is when the client stops waiting for the response
	// (its attempt timeout or the end of its budget): a model may skip work
	// whose client has gone. 0 means the client waits as long as it takes.
	GiveUpAt time.Duration
}

// Response is the server's answer to one request.
type Response struct {
	// Outcome is what the client receives; Class Success means admitted.
	Outcome policies.Outcome
	// At is when the response reaches the client; never before the arrival.
	At time.Duration
}

// Workload creates a run's operations. Operation i (0 <= i < Operations())
// starts at Start(i, rng), where rng is operation i's own start stream.
type Workload interface {
	Validate() error
	// Operations returns the number of operations in a run.
	Operations() int
	// Start returns when operation i starts, drawing from rng if it needs
	// randomness.
	Start(i int, rng *rand.Rand) time.Duration
}
