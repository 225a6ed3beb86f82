package sim

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// ResumeMode says how an agent session goes on after a model call gives up.
type ResumeMode uint8

const (
	// ResumeTurn repeats the failed turn (the conversation so far is kept).
	ResumeTurn ResumeMode = iota
	// ResumeRestart starts the whole session again from its first turn.
	ResumeRestart
)

func (m ResumeMode) String() string {
	switch m {
	case ResumeTurn:
		return "turn"
	case ResumeRestart:
		return "restart"
	}
	return fmt.Sprintf("resume(%d)", uint8(m))
}

// AgentSessions is a workload of Sessions agent sessions, each a chain of
// Turns model calls: each call is one operation (with the policy's
// retries), and a session's next call starts a Think draw after the
// previous one completes. When a call gives up, the session has failed,
// unless it has repeats left (MaxRepeats per session): then, Pause later,
// it repeats the failed turn (ResumeTurn) or starts again from turn 1
// (ResumeRestart). Session s's first call starts at t = 0, or uniformly in
// [0, Spread) from operation s's start stream when Spread > 0.
// It implements Chained (operations 0 … Sessions-1 are the sessions' first
// calls; later ones are numbered in the order they start) and reports
// its sessions as counters (sessions.completed and the rest).
type AgentSessions struct {
	Sessions int
	Turns    int
	// Think is the pause between a completed call and the session's next;
	// nil means none.
	Think  Distribution
	Spread time.Duration
	Resume ResumeMode
	// Pause is the wait after a call gives up before the session goes on.
	Pause time.Duration
	// MaxRepeats is how many failed calls a session may recover from.
	MaxRepeats int
	// Request sizes: turn t's call (t = 0, 1, …) sends InputTokens +
	// t·InputGrowth input tokens (the conversation grows) and asks for
	// OutputTokens (0: the server model's defaults).
	InputTokens, InputGrowth, OutputTokens int
	// Background, if its Share is above 0, makes some of each session's
	// turns background work (Background).
	Background Background
}

// Background describes the background calls of agent sessions (an agent
// CLI's compaction or session memory): a Share of each session's turns,
// spread evenly (turn t, from 0, is background when (t+1)·Share and
// t·Share round to different whole numbers, with Share in millionths, so
// a share of 1/2 makes turns 1, 3, 5, … background and 1/4 turns 2, 6,
// 10, …, counting from 1), whose calls carry Priority; the
// others carry the default priority. A background call that gives up
// does not end its session, use a repeat or repeat the turn: the work is
// dropped (the conversation goes uncompacted), the session goes on to
// its next turn after a Think draw as if the call had completed, and the
// sessions.background_failed counter counts it.
type Background struct {
	Share    float64
	Priority Priority
}

// millionths is the background share in millionths, so that which turns
// are background is decided in exact integer arithmetic.
func (b Background) millionths() int64 { return int64(b.Share*1e6 + 0.5) }

// background reports whether turn t is background work.
func (b Background) background(t int32) bool {
	m := b.millionths()
	return ((int64(t)+1)*m+5e5)/1e6 > (int64(t)*m+5e5)/1e6
}

// Validate reports the first problem with the workload's numbers.
func (w *AgentSessions) Validate() error {
	switch {
	case w.Sessions <= 0:
		return fmt.Errorf("agent sessions: needs at least one session (got %d)", w.Sessions)
	case w.Turns <= 0:
		return fmt.Errorf("agent sessions: needs at least one turn (got %d)", w.Turns)
	case w.MaxRepeats < 0:
		return fmt.Errorf("agent sessions: negative max repeats %d", w.MaxRepeats)
	case w.Resume != ResumeTurn && w.Resume != ResumeRestart:
		return fmt.Errorf("agent sessions: unknown resume mode %v", w.Resume)
	case w.Spread < 0 || w.Pause < 0:
		return fmt.Errorf("agent sessions: negative spread or pause")
	case w.InputTokens < 0 || w.InputGrowth < 0 || w.OutputTokens < 0:
		return fmt.Errorf("agent sessions: negative token count")
	case !(w.Background.Share >= 0 && w.Background.Share <= 1):
		return fmt.Errorf("agent sessions: background share %v is not in [0, 1]", w.Background.Share)
	case w.Background.Priority < -MaxPriority || w.Background.Priority > MaxPriority:
		return fmt.Errorf("agent sessions: background priority %d is not within ±%d", w.Background.Priority, MaxPriority)
	}
	if n := w.slots(); n*int64(w.Sessions) > MaxOperations {
		return fmt.Errorf("agent sessions: %d sessions may make %d calls each; at most %d operations are supported", w.Sessions, n, MaxOperations)
	}
	if w.Think != nil {
		return validateDistribution("agent sessions: think time", w.Think)
	}
	return nil
}

// slots returns the most calls one session may make.
func (w *AgentSessions) slots() int64 {
	if w.Resume == ResumeRestart {
		return int64(w.Turns) * (int64(w.MaxRepeats) + 1)
	}
	return int64(w.Turns) + int64(w.MaxRepeats)
}

// Operations returns the most calls a run may make: Sessions ×
// (Turns + MaxRepeats) with ResumeTurn, Sessions × Turns × (MaxRepeats+1)
// with ResumeRestart.
func (w *AgentSessions) Operations() int { return w.Sessions * int(w.slots()) }

// Start returns session i's first start: 0, or uniform over [0, Spread).
func (w *AgentSessions) Start(_ int, rng *rand.Rand) time.Duration {
	return spreadStart(w.Spread, rng)
}

// NewChain returns the sessions' state of one run.
func (w *AgentSessions) NewChain() Chain {
	n := w.Operations()
	c := &sessionChain{w: w, think: forRun(w.Think), session: make([]int32, n), turn: make([]int32, n),
		repeats: make([]int32, w.Sessions), tried: make([]int32, w.Sessions), next: w.Sessions}
	for i := range w.Sessions {
		c.session[i] = int32(i)
	}
	c.stats.Started = w.Sessions
	if w.Background.millionths() > 0 {
		return prioritizedSessions{c}
	}
	return c
}

// PriorityLevels returns the priorities of the sessions' calls, highest
// first: none without background calls.
func (w *AgentSessions) PriorityLevels() []Priority {
	if w.Background.millionths() == 0 {
		return nil
	}
	if w.Background.millionths() >= 1e6 {
		return []Priority{w.Background.Priority}
	}
	return sortedLevels(PriorityDefault, w.Background.Priority)
}

// prioritizedSessions is the chain of sessions with background calls: it
// gives each call its turn's priority.
type prioritizedSessions struct{ *sessionChain }

func (c prioritizedSessions) Priority(i int) Priority {
	if b := c.w.Background; b.background(c.turn[i]) {
		return b.Priority
	}
	return PriorityDefault
}

// ReportCounters reports the session counts and
// sessions.background_failed.
func (c prioritizedSessions) ReportCounters(cs *Counters) {
	c.stats.report(cs)
	cs.Add("sessions.background_failed", int64(c.stats.BackgroundFailed))
}

type sessionChain struct {
	w       *AgentSessions
	think   Distribution // forRun(w.Think); nil for none
	session []int32      // operation → its session
	turn    []int32      // operation → its turn (0-based)
	repeats []int32      // session → failed calls recovered from
	tried   []int32      // session → the highest turn it has tried
	next    int          // the next operation to start
	stats   sessionStats
}

func (c *sessionChain) Leaders() int { return c.w.Sessions }

// Next goes on with the session of the call that ended (see AgentSessions).
// A Think draw is made only after a completed call that is not the last.
func (c *sessionChain) Next(ended int, at time.Duration, completed bool, rng *rand.Rand) (int, time.Duration, bool) {
	s, t := c.session[ended], c.turn[ended]
	var nt int32
	start := at
	switch {
	case completed && int(t)+1 == c.w.Turns:
		c.stats.Completed++
		return 0, 0, false
	case !completed && c.w.Background.background(t) && int(t)+1 == c.w.Turns:
		// A background call that gives up drops its work only.
		c.stats.BackgroundFailed++
		c.stats.Completed++
		return 0, 0, false
	case completed || c.w.Background.background(t):
		if !completed {
			c.stats.BackgroundFailed++
		}
		nt = t + 1
		if c.think != nil {
			start += c.think.Sample(rng)
		}
	case int(c.repeats[s]) >= c.w.MaxRepeats:
		c.stats.Failed++
		c.stats.TokensWasted += c.tokensBefore(t)
		return 0, 0, false
	default:
		c.repeats[s]++
		c.stats.Resumed++
		if c.w.Resume == ResumeTurn {
			nt = t
		} else {
			c.stats.TokensWasted += c.tokensBefore(t)
		}
		start += c.w.Pause
	}
	if nt <= c.tried[s] {
		c.stats.TurnsRepeated++
	}
	c.tried[s] = max(c.tried[s], nt)
	i := c.next
	c.next++
	c.session[i], c.turn[i] = s, nt
	return i, start, true
}

// tokensBefore returns the tokens of turns 0 … t-1, the calls a session
// has completed when its call of turn t fails.
func (c *sessionChain) tokensBefore(t int32) int64 {
	n, w := int64(t), c.w
	return n*int64(w.InputTokens+w.OutputTokens) + int64(w.InputGrowth)*n*(n-1)/2
}

// Tokens sizes operation i's request by its turn.
func (c *sessionChain) Tokens(i int) (input, output int) {
	return c.w.InputTokens + int(c.turn[i])*c.w.InputGrowth, c.w.OutputTokens
}

// sessionStats counts the sessions of a run.
type sessionStats struct {
	// Started, Completed and Failed count sessions: Failed ones ran out of
	// repeats (or had none) when a call gave up.
	Started, Completed, Failed int
	// Resumed counts failed calls after which the session went on (by
	// repeating the turn, or by restarting).
	Resumed int
	// TurnsRepeated counts model calls that ran a turn the session had
	// already run or tried: the repeated turn itself, and with restarts
	// every turn run again.
	TurnsRepeated int
	// TokensWasted counts the input and output tokens of completed calls
	// whose work the session lost: the turns before the failed one, when
	// the session restarts or fails. (A repeated turn loses no completed
	// call; tokens of the failed calls themselves are the server's to
	// count, as server.wasted_output_tokens.)
	TokensWasted int64
	// BackgroundFailed counts background calls that gave up (their
	// sessions went on).
	BackgroundFailed int
}

// ReportCounters reports the run's session counts: sessions.started,
// sessions.completed, sessions.failed, sessions.resumed,
// sessions.turns_repeated and sessions.tokens_wasted.
func (c *sessionChain) ReportCounters(cs *Counters) { c.stats.report(cs) }

// report adds the counts to c.
func (st sessionStats) report(c *Counters) {
	c.Add("sessions.started", int64(st.Started))
	c.Add("sessions.completed", int64(st.Completed))
	c.Add("sessions.failed", int64(st.Failed))
	c.Add("sessions.resumed", int64(st.Resumed))
	c.Add("sessions.turns_repeated", int64(st.TurnsRepeated))
	c.Add("sessions.tokens_wasted", st.TokensWasted)
}
