package sim

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"
)

// ArrivalTrace is a workload whose operations start at recorded times,
// such as the first attempts of a production log (retrysim fit): nothing
// is drawn, every run has the same arrivals.
type ArrivalTrace struct {
	// Starts is when each operation starts, in any order; >= 0.
	Starts []time.Duration
}

// ArrivalsFromCSV reads an arrival trace: CSV rows "start,count", count
// operations starting at start (a Go duration or seconds), in the form
// of a capacity trace (readTrace: the first row at 0, starts increasing,
// # comments, an optional header).
func ArrivalsFromCSV(r io.Reader) (*ArrivalTrace, error) {
	rows, err := readTrace(r, "count")
	if err != nil {
		return nil, err
	}
	w := &ArrivalTrace{}
	for _, row := range rows {
		if len(w.Starts)+row.value > MaxOperations {
			return nil, fmt.Errorf("capacity trace: line %d: more than %d arrivals", row.line, MaxOperations)
		}
		for range row.value {
			w.Starts = append(w.Starts, row.start)
		}
	}
	return w, nil
}

// Validate checks that there are arrivals and none before 0.
func (w *ArrivalTrace) Validate() error {
	if len(w.Starts) == 0 {
		return fmt.Errorf("arrival trace: no arrivals")
	}
	if len(w.Starts) > MaxOperations {
		return fmt.Errorf("arrival trace: %d arrivals; at most %d are supported", len(w.Starts), MaxOperations)
	}
	for i, s := range w.Starts {
		if s < 0 || s >= Horizon {
			return fmt.Errorf("arrival trace: arrival %d at %v is outside [0, %v)", i, s, Horizon)
		}
	}
	return nil
}

// Operations returns the number of arrivals.
func (w *ArrivalTrace) Operations() int { return len(w.Starts) }

// Start returns arrival i's time; it draws nothing.
func (w *ArrivalTrace) Start(i int, _ *rand.Rand) time.Duration { return w.Starts[i] }

// SessionTrace is a workload of recorded sessions, such as the calls of a
// production log that names sessions (retrysim fit): a session's calls
// start in order, the first at its recorded start, each later one its
// recorded gap after the previous call ends, whether that call completed
// or gave up (the calls as they happened: a session makes as many calls
// as it was logged making). Nothing is drawn. Operations 0 …
// len(Sessions)-1 are the sessions' first calls; later ones are numbered
// in the order they start. A session completed when its last call
// completed, else it failed (sessions.completed, sessions.failed); a call
// that gave up with calls after it counts in sessions.resumed.
type SessionTrace struct {
	Sessions []RecordedSession
}

// RecordedSession is one session of a SessionTrace.
type RecordedSession struct {
	// Start is when its first call starts; >= 0.
	Start time.Duration
	// Gaps are the waits before each later call, from the end of the
	// call before it; >= 0. A session makes len(Gaps)+1 calls.
	Gaps []time.Duration
}

// SessionsFromCSV reads a session trace: CSV rows "start,gaps", one per
// session, start a Go duration or seconds, gaps the waits before each
// later call separated by spaces (empty for a session of one call);
// # comments and a header row "start,gaps" are allowed.
func SessionsFromCSV(r io.Reader) (*SessionTrace, error) {
	cr := traceCSV(r)
	w := &SessionTrace{}
	calls := 0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, traceCSVError(err)
		}
		line, _ := cr.FieldPos(0)
		if len(w.Sessions) == 0 && strings.EqualFold(strings.TrimSpace(rec[0]), "start") {
			continue // the header
		}
		var s RecordedSession
		if s.Start, err = parseTraceStart(strings.TrimSpace(rec[0])); err != nil {
			return nil, fmt.Errorf("capacity trace: line %d: start %q: %v", line, rec[0], err)
		}
		for _, g := range strings.Fields(rec[1]) {
			d, err := parseTraceStart(g)
			if err != nil {
				return nil, fmt.Errorf("capacity trace: line %d: gap %q: %v", line, g, err)
			}
			s.Gaps = append(s.Gaps, d)
		}
		if calls += len(s.Gaps) + 1; calls > MaxOperations {
			return nil, fmt.Errorf("capacity trace: line %d: more than %d calls", line, MaxOperations)
		}
		w.Sessions = append(w.Sessions, s)
	}
	if len(w.Sessions) == 0 {
		return nil, fmt.Errorf("capacity trace: no rows")
	}
	return w, nil
}

// Validate checks that there are sessions, starts within the horizon and
// no negative gap.
func (w *SessionTrace) Validate() error {
	if len(w.Sessions) == 0 {
		return fmt.Errorf("session trace: no sessions")
	}
	if n := w.Operations(); n > MaxOperations {
		return fmt.Errorf("session trace: %d calls; at most %d are supported", n, MaxOperations)
	}
	for i, s := range w.Sessions {
		if s.Start < 0 || s.Start >= Horizon {
			return fmt.Errorf("session trace: session %d starts at %v, outside [0, %v)", i, s.Start, Horizon)
		}
		for _, g := range s.Gaps {
			if g < 0 || g >= Horizon {
				return fmt.Errorf("session trace: session %d has a gap of %v, outside [0, %v)", i, g, Horizon)
			}
		}
	}
	return nil
}

// Operations returns the number of calls of every session.
func (w *SessionTrace) Operations() int {
	n := 0
	for _, s := range w.Sessions {
		n += len(s.Gaps) + 1
	}
	return n
}

// Start returns session i's start; it draws nothing.
func (w *SessionTrace) Start(i int, _ *rand.Rand) time.Duration { return w.Sessions[i].Start }

// NewChain returns the sessions' state of one run.
func (w *SessionTrace) NewChain() Chain {
	n := w.Operations()
	c := &traceChain{w: w, session: make([]int32, n), call: make([]int32, n), next: len(w.Sessions)}
	for i := range w.Sessions {
		c.session[i] = int32(i)
	}
	c.stats.Started = len(w.Sessions)
	return c
}

type traceChain struct {
	w       *SessionTrace
	session []int32 // operation → its session
	call    []int32 // operation → its call within the session (0-based)
	next    int
	stats   sessionStats
}

func (c *traceChain) Leaders() int { return len(c.w.Sessions) }

// Next starts the session's next call its gap after this one ended.
func (c *traceChain) Next(ended int, at time.Duration, completed bool, _ *rand.Rand) (int, time.Duration, bool) {
	s, k := c.session[ended], c.call[ended]
	gaps := c.w.Sessions[s].Gaps
	if int(k) == len(gaps) {
		if completed {
			c.stats.Completed++
		} else {
			c.stats.Failed++
		}
		return 0, 0, false
	}
	if !completed {
		c.stats.Resumed++
	}
	i := c.next
	c.next++
	c.session[i], c.call[i] = s, k+1
	return i, at + gaps[k], true
}

// ReportCounters reports sessions.started, completed, failed and resumed
// (a trace knows no turns or tokens: it does not report those).
func (c *traceChain) ReportCounters(cs *Counters) {
	cs.Add("sessions.started", int64(c.stats.Started))
	cs.Add("sessions.completed", int64(c.stats.Completed))
	cs.Add("sessions.failed", int64(c.stats.Failed))
	cs.Add("sessions.resumed", int64(c.stats.Resumed))
}
