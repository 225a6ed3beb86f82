package fit

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// maxChained bounds the calls of sessions a fit chains: every session's
// start and gaps are kept until the log ends (8 bytes a call).
const maxChained = 1 << 22

// chainer follows each session's calls through a log: a call is an
// operation, the first attempt of a new operation of a session starts its
// next call, and the gap before it is from the end of the session's
// previous call (its operation record's end, else its last answer).
type chainer struct {
	sessions map[string]*loggedSession
	ops      map[string]string // the current call's op id → its session
	calls    int
	loose    int    // operations without a session id
	dropped  string // why sessions are not chained ("" while they are)
}

type loggedSession struct {
	start, lastEnd time.Time
	cur            string
	gaps           []time.Duration
}

func newChainer() *chainer {
	return &chainer{sessions: map[string]*loggedSession{}, ops: map[string]string{}}
}

// see follows one record.
func (c *chainer) see(rec *Record) {
	if c.dropped != "" {
		return
	}
	first := rec.Kind == AttemptRecord && rec.Attempt == 1 || rec.Kind == OperationRecord && rec.Attempts == 0 && !rec.Start.IsZero()
	if rec.Session == "" {
		if first {
			c.loose++
		}
		if rec.Kind == OperationRecord {
			if sid, ok := c.ops[rec.Op]; ok { // an operation record without the session id
				c.end(sid, rec.Op, rec.End)
			}
		}
		return
	}
	s := c.sessions[rec.Session]
	if first && (s == nil || s.cur != rec.Op) {
		at := rec.Sent
		if rec.Kind == OperationRecord {
			at = rec.Start
		}
		if c.calls++; c.calls > maxChained {
			c.drop(fmt.Sprintf("the log's sessions make more than %d calls, more than a fit chains", maxChained))
			return
		}
		if s == nil {
			s = &loggedSession{start: at}
			c.sessions[rec.Session] = s
		} else {
			delete(c.ops, s.cur)
			s.gaps = append(s.gaps, max(at.Sub(s.lastEnd), 0))
		}
		s.cur, s.lastEnd = rec.Op, at
		c.ops[rec.Op] = rec.Session
	}
	if s == nil || s.cur != rec.Op {
		return // a record of an earlier call, or of a call whose start was not logged
	}
	switch rec.Kind {
	case AttemptRecord:
		if rec.Answered.After(s.lastEnd) {
			s.lastEnd = rec.Answered
		}
	case OperationRecord:
		c.end(rec.Session, rec.Op, rec.End)
	}
}

// end notes that the session's current call op ended at end.
func (c *chainer) end(sid, op string, end time.Time) {
	if s := c.sessions[sid]; s != nil && s.cur == op && end.After(s.lastEnd) {
		s.lastEnd = end
	}
}

func (c *chainer) drop(why string) {
	c.dropped = why
	c.sessions, c.ops = nil, nil
}

// chained reports whether the fit writes sessions (a session trace), or
// why not.
func (c *chainer) chained() (bool, string) {
	switch {
	case c.dropped != "":
		return false, c.dropped
	case len(c.sessions) == 0:
		return false, ""
	case c.loose > 0:
		return false, fmt.Sprintf("%d operations have no session id", c.loose)
	}
	return true, ""
}

// WriteSessions writes the session trace, the CSV the session-trace
// workload reads: a row per session, by start (ties by id), its start
// from origin and its gaps.
func (c *chainer) write(out io.Writer, origin time.Time, name string) error {
	w := bufio.NewWriter(out)
	fmt.Fprintf(w, "# sessions of %s: the first call's start from %s, then the gap before each later call from the end of the one before\nstart,gaps\n",
		name, origin.Format(time.RFC3339Nano))
	ids := make([]string, 0, len(c.sessions))
	for id := range c.sessions {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		if d := c.sessions[a].start.Compare(c.sessions[b].start); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	var gaps []string
	for _, id := range ids {
		s := c.sessions[id]
		gaps = gaps[:0]
		for _, g := range s.gaps {
			gaps = append(gaps, g.String())
		}
		fmt.Fprintf(w, "%v,%s\n", max(s.start.Sub(origin), 0), strings.Join(gaps, " "))
	}
	return w.Flush()
}

// Chained is the number of sessions the fit chains (a session trace), or
// 0 and why not ("" when the log names no session).
func (r *Result) Chained() (sessions int, why string) {
	if ok, why := r.chain.chained(); !ok {
		return 0, why
	}
	return len(r.chain.sessions), ""
}
