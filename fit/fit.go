package fit

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/stats"
)

// Settings are how a log is fitted.
type Settings struct {
	// Window is the capacity window (default 1s).
	Window time.Duration
	// Resolution is the arrival trace's: first attempts are counted in
	// bins this wide and start at their bin's start (default 1ms).
	Resolution time.Duration
	// Policy picks one policy's records from a log of several (a
	// simulated log); "" when the log has one.
	Policy string
}

// The rejections of a scenario file a logged failure becomes, by class and
// status (kinds' names: overloaded, unavailable, rate-limited, ...).
const (
	rejOverloaded = iota
	rejUnavailable
	rejRateLimited
	rejServerError
	rejTimeout
	rejBadRequest
	rejSpendLimit
	numRejects
)

var rejectNames = [numRejects]string{"overloaded", "unavailable", "rate-limited", "server-error", "timeout", "bad-request", "spend-limit"}

// rejectOf is the rejection a failed attempt's class and status stand for.
func rejectOf(c policies.Class, status int) int {
	switch c {
	case policies.Capacity:
		if status == 503 {
			return rejUnavailable
		}
		return rejOverloaded
	case policies.RetryAfter:
		return rejRateLimited
	case policies.Transient:
		if status == 504 {
			return rejTimeout
		}
		return rejServerError
	}
	if status == 429 {
		return rejSpendLimit
	}
	return rejBadRequest
}

// isCapacity reports whether a rejection says the server had no room.
func isCapacity(rej int) bool {
	return rej == rejOverloaded || rej == rejUnavailable || rej == rejRateLimited
}

// Window is what one capacity window of the log saw: the attempts sent in
// it (by their sent time), those admitted (succeeded) and those rejected.
type Window struct {
	Sent, Admitted int
	Rejected       [numRejects]int
	Unclassified   int
	latencySum     time.Duration
	waitSum        time.Duration
	waits          int
}

// capacityRejections is the window's rejections for want of room.
func (w *Window) capacityRejections() int {
	return w.Rejected[rejOverloaded] + w.Rejected[rejUnavailable] + w.Rejected[rejRateLimited]
}

// maxRetries bounds the retry numbers whose backoffs are kept apart.
const maxRetries = 32

// waits are the backoffs logged before retry n (without a server wait).
type waits struct {
	n        int
	min, max time.Duration
	all      []time.Duration // a bounded sample, for the fit's error
}

// maxWaitSample bounds the backoffs kept per retry number.
const maxWaitSample = 4096

// Result is a fitted log.
type Result struct {
	Settings
	// Origin is time 0 of the fitted scenario: the first window's start.
	Origin time.Time
	// Windows are the capacity windows from Origin to the last attempt.
	Windows []Window
	// bins count the first attempts, by Resolution from the Unix epoch.
	bins binCounts
	// Latency counts every attempt's time from sent to answered (ns).
	Latency stats.Histogram
	// Attempts, Operations (first attempts), Completed (successes) and
	// GaveUp (operation records that gave up, by reason).
	Attempts, Operations, Completed int
	GaveUp                          map[string]int
	// OperationRecords is the number of operation records read.
	OperationRecords int
	// MaxAttempt is the highest attempt number; deadline is the longest
	// time a deadline give-up ran.
	MaxAttempt    int
	deadlineSpent time.Duration
	backoffs      [maxRetries]waits
	// Sessions counts the distinct session ids seen (up to maxSessions).
	sessions map[string]bool
	// chain follows the calls of each session (sessions.go).
	chain *chainer
	// runner follows what the policy that ran did besides its backoffs:
	// model switches and holds (runner.go).
	runner *runner
	// Skipped is the bad lines skipped (lenient).
	Skipped int
	// Policies are the policies the log names (a simulated log).
	Policies []string
	// Name is the log's name.
	Name string
}

// maxSessions bounds the session ids remembered (they are only counted).
const maxSessions = 1 << 16

// Fit reads a log to its end and fits it. Memory: the windows and arrival
// bins the log spans, not its lines.
func Fit(rd Reader, s Settings) (*Result, error) {
	if s.Window <= 0 {
		s.Window = time.Second
	}
	if s.Resolution <= 0 {
		s.Resolution = time.Millisecond
	}
	res := &Result{Settings: s, GaveUp: map[string]int{}, sessions: map[string]bool{}, chain: newChainer(), runner: newRunner()}
	windows := map[int64]*Window{}
	bins := binCounts{}
	res.bins = bins
	policiesSeen := map[string]bool{}
	first, any := time.Time{}, false
	open := map[string]lastAttempt{} // operations whose waits are inferred
	var rec Record
	for rd.Next(&rec) {
		if rec.Policy != "" && !policiesSeen[rec.Policy] && len(policiesSeen) < 1000 {
			policiesSeen[rec.Policy] = true
		}
		if s.Policy != "" && rec.Policy != s.Policy {
			continue
		}
		if rec.Session != "" && len(res.sessions) < maxSessions {
			res.sessions[rec.Session] = true
		}
		res.chain.see(&rec)
		res.runner.see(&rec)
		if rec.Kind == OperationRecord {
			res.OperationRecords++
			delete(open, rec.Op)
			if rec.Attempts == 0 && !rec.Start.IsZero() {
				// Refused before its first attempt (a breaker, a
				// throttle): an arrival all the same.
				res.Operations++
				bins.add(floorDiv(rec.Start.UnixNano(), int64(s.Resolution)))
				if !any || rec.Start.Before(first) {
					first, any = rec.Start, true
				}
			}
			if rec.Outcome == "gave_up" {
				res.GaveUp[rec.Reason]++
				if rec.Reason == "deadline" && !rec.Start.IsZero() {
					res.deadlineSpent = max(res.deadlineSpent, rec.End.Sub(rec.Start))
				}
			}
			continue
		}
		if !any || rec.Sent.Before(first) {
			first, any = rec.Sent, true
		}
		res.Attempts++
		res.MaxAttempt = max(res.MaxAttempt, rec.Attempt)
		wi := floorDiv(rec.Sent.UnixNano(), int64(s.Window))
		w := windows[wi]
		if w == nil {
			w = &Window{}
			windows[wi] = w
		}
		w.Sent++
		switch {
		case !rec.Classified:
			w.Unclassified++
		case rec.Class == policies.Success:
			w.Admitted++
			res.Completed++
		default:
			rej := rejectOf(rec.Class, rec.Status)
			w.Rejected[rej]++
			if rec.HasServerWait && isCapacity(rej) {
				w.waitSum += rec.ServerWait
				w.waits++
			}
		}
		res.Latency.Add(int64(rec.Answered.Sub(rec.Sent)))
		w.latencySum += rec.Answered.Sub(rec.Sent)
		if rec.Attempt == 1 {
			res.Operations++
			bins.add(floorDiv(rec.Sent.UnixNano(), int64(s.Resolution)))
		}
		if rec.HasBackoff {
			if !rec.HasServerWait {
				res.addBackoff(rec.Attempt-1, rec.Backoff)
			}
		} else if prev, ok := open[rec.Op]; ok && prev.attempt == rec.Attempt-1 {
			// No wait logged: the gap from the last answer to this
			// attempt is the wait (gates and throttles included).
			if !prev.serverWait {
				res.addBackoff(prev.attempt-1, max(rec.Sent.Sub(prev.answered), 0))
			}
		}
		switch {
		case rec.HasBackoff || (rec.Classified && (rec.Class == policies.Success || rec.Class == policies.Terminal)):
			delete(open, rec.Op) // its waits are logged, or it has ended
		case len(open) < maxOpen || open[rec.Op].attempt > 0:
			open[rec.Op] = lastAttempt{rec.Attempt, rec.Answered, rec.HasServerWait}
		}
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	res.Skipped = rd.Skipped()
	res.Policies = slices.Sorted(maps.Keys(policiesSeen))
	if s.Policy == "" && len(res.Policies) > 1 {
		return nil, fmt.Errorf("the log holds the records of %d policies (%s): choose one with --log-policy", len(res.Policies), strings.Join(res.Policies, ", "))
	}
	if s.Policy != "" && !policiesSeen[s.Policy] {
		return nil, fmt.Errorf("--log-policy %q: the log has no records of it (it has %s)", s.Policy, strings.Join(res.Policies, ", "))
	}
	if res.Attempts == 0 {
		return nil, errors.New("the log has no attempts")
	}
	w0 := floorDiv(first.UnixNano(), int64(s.Window))
	res.Origin = time.Unix(0, w0*int64(s.Window)).UTC()
	last := slices.Max(slices.Collect(maps.Keys(windows)))
	if last-w0 >= maxWindows {
		return nil, fmt.Errorf("the log spans %d windows of %v; at most %d are supported (a longer --window)", last-w0+1, s.Window, maxWindows)
	}
	res.Windows = make([]Window, last-w0+1)
	for i, w := range windows {
		res.Windows[i-w0] = *w
	}
	return res, nil
}

// maxWindows bounds the capacity windows of a fit (a day of 1 s windows
// is 86,400).
const maxWindows = 10_000_000

// floorDiv is a/b rounded down (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// Sessions is the number of distinct session ids the log names.
func (r *Result) Sessions() int { return len(r.sessions) }

// quantile is the histogram's q-quantile as a duration.
func quantile(h *stats.Histogram, q float64) time.Duration {
	return time.Duration(math.Round(h.Quantile(q)))
}

// binChunk is the number of arrival bins counted together.
const binChunk = 4096

// binCounts counts arrivals per bin in chunks of binChunk bins, allocated
// as the log touches them: 16 KiB per 4.096 s at 1 ms, whatever the
// number of lines.
type binCounts map[int64]*[binChunk]uint32

func (b binCounts) add(bin int64) {
	c := b[floorDiv(bin, binChunk)]
	if c == nil {
		c = new([binChunk]uint32)
		b[floorDiv(bin, binChunk)] = c
	}
	c[bin-floorDiv(bin, binChunk)*binChunk]++
}

// each calls f for every bin with arrivals, in time order.
func (b binCounts) each(f func(bin int64, n int)) {
	for _, k := range slices.Sorted(maps.Keys(b)) {
		for i, n := range b[k] {
			if n > 0 {
				f(k*binChunk+int64(i), int(n))
			}
		}
	}
}

// EachArrival calls f for every bin of first attempts, in time order: n
// arrivals at at (from Origin).
func (r *Result) EachArrival(f func(at time.Duration, n int)) {
	origin := r.Origin.UnixNano()
	r.bins.each(func(b int64, n int) { f(time.Duration(b*int64(r.Resolution)-origin), n) })
}

// lastAttempt is an operation's last attempt, for a log that records no
// waits: the next attempt's wait is the gap from its answer.
type lastAttempt struct {
	attempt    int
	answered   time.Time
	serverWait bool
}

// maxOpen bounds the operations whose last attempt is remembered: those
// whose last attempt failed and that have no operation record yet.
const maxOpen = 1 << 20

// addBackoff counts a wait before retry n (0-based).
func (r *Result) addBackoff(n int, d time.Duration) {
	if n < 0 || n >= maxRetries {
		return
	}
	b := &r.backoffs[n]
	if b.n == 0 || d < b.min {
		b.min = d
	}
	b.max = max(b.max, d)
	b.n++
	if len(b.all) < maxWaitSample {
		b.all = append(b.all, d)
	}
}
