package sim

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// ClosedLoop is a workload of Workers workers, each running operations back
// to back: when one ends (completed or given up), the worker thinks for a
// Think draw and starts its next, so the load follows the server's speed.
// Worker w's first operation starts at t = 0, or uniformly in [0, Spread)
// from operation w's start stream when Spread > 0 (as a burst). A worker runs
// at most PerWorker operations and starts none after Until (if > 0).
// It implements Chained: operations 0 … Workers-1 are the workers' first;
// later ones are numbered in the order they start.
type ClosedLoop struct {
	Workers   int
	PerWorker int
	// Think is the pause between an operation's end and the worker's next
	// start; nil means none.
	Think  Distribution
	Spread time.Duration
	Until  time.Duration
	// InputTokens and OutputTokens size every request (0: the server
	// model's defaults).
	InputTokens, OutputTokens int
}

// Validate reports the first problem with the workload's numbers.
func (w *ClosedLoop) Validate() error {
	switch {
	case w.Workers <= 0:
		return fmt.Errorf("closed loop: needs at least one worker (got %d)", w.Workers)
	case w.PerWorker <= 0:
		return fmt.Errorf("closed loop: needs at least one operation per worker (got %d)", w.PerWorker)
	case int64(w.Workers)*int64(w.PerWorker) > MaxOperations:
		return fmt.Errorf("closed loop: %d workers × %d operations; at most %d operations are supported", w.Workers, w.PerWorker, MaxOperations)
	case w.Spread < 0 || w.Until < 0:
		return fmt.Errorf("closed loop: negative spread or until")
	case w.InputTokens < 0 || w.OutputTokens < 0:
		return fmt.Errorf("closed loop: negative token count")
	}
	if w.Think != nil {
		return validateDistribution("closed loop: think time", w.Think)
	}
	return nil
}

// Operations returns Workers·PerWorker, the most a run may start.
func (w *ClosedLoop) Operations() int { return w.Workers * w.PerWorker }

// Start returns worker i's first start: 0, or uniform over [0, Spread).
func (w *ClosedLoop) Start(_ int, rng *rand.Rand) time.Duration {
	return spreadStart(w.Spread, rng)
}

// Tokens returns the workload's request size.
func (w *ClosedLoop) Tokens(int) (input, output int) { return w.InputTokens, w.OutputTokens }

// NewChain returns the workers' state of one run.
func (w *ClosedLoop) NewChain() Chain {
	c := &closedChain{w: w, think: forRun(w.Think), worker: make([]int32, w.Operations()), ran: make([]int32, w.Workers), next: w.Workers}
	for i := range w.Workers {
		c.worker[i] = int32(i)
		c.ran[i] = 1
	}
	return c
}

type closedChain struct {
	w      *ClosedLoop
	think  Distribution // forRun(w.Think); nil for none
	worker []int32      // operation → its worker
	ran    []int32      // worker → operations started
	next   int          // the next operation to start
}

func (c *closedChain) Leaders() int { return c.w.Workers }

// Next starts the worker's next operation after a Think draw, unless it
// has run PerWorker or the start would be after Until (the draw is made
// first).
func (c *closedChain) Next(ended int, at time.Duration, _ bool, rng *rand.Rand) (int, time.Duration, bool) {
	wk := c.worker[ended]
	if int(c.ran[wk]) >= c.w.PerWorker {
		return 0, 0, false
	}
	start := at
	if c.think != nil {
		start += c.think.Sample(rng)
	}
	if c.w.Until > 0 && start > c.w.Until {
		return 0, 0, false
	}
	i := c.next
	c.next++
	c.worker[i] = wk
	c.ran[wk]++
	return i, start, true
}
