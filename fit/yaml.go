package fit

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Output is what WriteScenario needs besides the fit.
type Output struct {
	// Scenario is the fitted scenario's name.
	Scenario string
	// Arrivals is the path of the arrival trace (WriteArrivals), as the
	// scenario file names it: relative to the file's folder.
	Arrivals string
	// Candidates are policies to compare with the one that ran: each a
	// YAML mapping of a scenario file's policy (at least its name).
	Candidates []string
	// Format is the log's format, for the header.
	Format string
}

// AsRun is the name of the fitted policy, the one that ran.
const AsRun = "as-run"

// WriteScenario writes the fitted scenario file: a capacity-windows server
// with a phase per run of equal windows (or an error-mix server when the
// log has failures but no rejection for want of room), the trace workload
// of the first attempts, and the policy that ran with the candidates.
func (r *Result) WriteScenario(out io.Writer, o Output) error {
	w := bufio.NewWriter(out)
	pf := r.FitPolicy()
	lat := r.FitLatency()
	wins, peak := r.Capacity()
	capRejected, otherFailed := 0, 0
	for i := range r.Windows {
		capRejected += r.Windows[i].capacityRejections()
		otherFailed += r.Windows[i].Rejected[rejServerError] + r.Windows[i].Rejected[rejTimeout] + r.Windows[i].Rejected[rejBadRequest] + r.Windows[i].Rejected[rejSpendLimit]
	}
	span := time.Duration(len(r.Windows)) * r.Window
	fmt.Fprintf(w, "# Fitted by retrysim fit from %s (%s): %d attempts of %d operations over %v from %s.\n",
		r.Name, o.Format, r.Attempts, r.Operations, span, r.Origin.Format(time.RFC3339Nano))
	if r.Skipped > 0 {
		fmt.Fprintf(w, "# %d bad lines were skipped (--lenient).\n", r.Skipped)
	}
	w.WriteString(`#
# What this fit can claim: the server admitted, in each window, what the
# log says it admitted, under the load it got. Where it also rejected
# requests for want of room, that is its capacity then. Where it rejected
# none, what it admitted is only a lower bound: those windows (marked
# "lower bound") are given the most any window admitted. A policy that
# sends less may have found more room than this file gives it, and one
# that sends more may have found less: read a counterfactual as "on a day
# with this capacity", not "on that day".
`)
	corr := r.LoadLatencyCorrelation()
	if corr > 0.5 {
		fmt.Fprintf(w, "# The response time grew with load (correlation %.2f between attempts sent and\n"+
			"# mean response time per window): the server queued. A queue server\n"+
			"# (type: queue) may describe it better than fixed capacities.\n", corr)
	}
	chained, why := r.chain.chained()
	if r.Sessions() > 0 && !chained {
		fmt.Fprintf(w, "# The log names sessions, but this fit does not chain them (%s):\n# every first attempt is an arrival of its own.\n", why)
	}
	fmt.Fprintf(w, "scenarios:\n  - name: %s\n    description: fitted from %s\n    seed: 1\n    server:\n", yamlString(o.Scenario), yamlString(r.Name))
	fmt.Fprintf(w, "      # response time: log p50 %v, p99 %v; the fit's quantiles (p10-p99) are within %.1f%% of the log's\n", roundDuration(lat.P50), roundDuration(lat.P99), 100*lat.Error)
	switch {
	case capRejected == 0 && otherFailed > 0:
		w.WriteString("      # no rejection for want of room: the failures, window by window, as an error mix\n      type: error-mix\n")
		fmt.Fprintf(w, "      response_time: %s\n      phases:\n", lat.YAML)
		r.writeErrorMix(w, func(int) bool { return true })
	case otherFailed > 0:
		fmt.Fprintf(w, "      # %d attempts failed otherwise (server errors, timeouts, terminal errors): an error\n"+
			"      # mix draws them first, window by window, as a share of the attempts sent; the rest\n"+
			"      # go on to the capacity fitted to what was admitted and rejected for want of room\n", otherFailed)
		fmt.Fprintf(w, "      type: error-mix\n      response_time: %s\n      phases:\n", lat.YAML)
		r.writeErrorMix(w, func(rej int) bool { return !isCapacity(rej) })
		var in bytes.Buffer
		iw := bufio.NewWriter(&in)
		fmt.Fprintf(iw, "type: capacity-windows\nresponse_time: %s\nphases:\n", lat.YAML)
		writePhases(iw, wins, peak, r.Window)
		iw.Flush()
		w.WriteString("      inner:\n" + indent(in.String(), "        "))
	default:
		fmt.Fprintf(w, "      type: capacity-windows\n      response_time: %s\n      phases:\n", lat.YAML)
		writePhases(w, wins, peak, r.Window)
	}
	w.WriteString("    clients:\n")
	if chained {
		fmt.Fprintf(w, "      # the %d calls of %d sessions as they happened: each session's first call at its\n"+
			"      # logged start, each later one its logged gap after the call before it ended (completed\n"+
			"      # or not). A policy that completes more does not make a session longer than it was\n"+
			"      # logged, nor one that gives up more shorter.\n", r.chain.calls, len(r.chain.sessions))
		w.WriteString("      type: session-trace\n")
	} else {
		fmt.Fprintf(w, "      type: trace                # the %d first attempts, at their logged times (bins of %v)\n", r.Operations, r.Resolution)
	}
	fmt.Fprintf(w, "      trace: %s\n", yamlString(o.Arrivals))
	// Every policy needs a bound; a candidate that should try longer than
	// the log shows sets its own max_attempts.
	if pf.MaxAttempts > 0 {
		how := "the most attempts an operation made; none gave up for attempts, so the limit may be higher"
		if pf.MaxAttemptsKnown {
			how = "the most attempts an operation made; some gave up for attempts"
		}
		fmt.Fprintf(w, "      max_attempts: %d            # %s\n", pf.MaxAttempts, how)
	}
	if pf.Deadline > 0 {
		fmt.Fprintf(w, "      deadline: %v               # the longest run of an operation that gave up for its deadline, rounded up\n", pf.Deadline)
	}
	w.WriteString("    policies:\n")
	presets, err := r.NearestPresets()
	if err != nil {
		return err
	}
	w.WriteString("      # What ran, as far as the log shows: the backoff below;\n")
	for _, l := range append(describePresets(presets, r.MaxAttempt, pf.Samples), r.runner.describe()...) {
		w.WriteString(wrapComment(l, "      #   "))
	}
	fmt.Fprintf(w, "      - name: %s               # the policy the log shows: %s\n", AsRun, pf.Describe())
	for _, l := range pf.YAML() {
		fmt.Fprintf(w, "        %s\n", l)
	}
	for _, c := range o.Candidates {
		lines := strings.Split(strings.TrimRight(indent(c, "        "), "\n"), "\n")
		lines[0] = "      - " + strings.TrimPrefix(lines[0], "        ")
		fmt.Fprintln(w, strings.Join(lines, "\n"))
	}
	return w.Flush()
}

// writePhases writes the capacity phases: consecutive windows with the
// same capacity, rejection and bound become one phase; the last phase
// (after the log) holds the peak for ever.
func writePhases(w *bufio.Writer, wins []CapacityWindow, peak int, window time.Duration) {
	for i := 0; i < len(wins); {
		j := i + 1
		for j < len(wins) && wins[j] == wins[i] {
			j++
		}
		c := wins[i]
		from, to := time.Duration(i)*window, time.Duration(j)*window
		note := fmt.Sprintf("%v-%v: capacity = admitted (requests were rejected)", from, to)
		switch {
		case c.Idle:
			note = fmt.Sprintf("%v-%v: no attempts; the capacity before kept", from, to)
		case !c.Bound:
			note = fmt.Sprintf("%v-%v: lower bound (none rejected); given the peak", from, to)
		}
		fmt.Fprintf(w, "        - duration: %v    # %s\n", to-from, note)
		writeAdmit(w, c, window)
		i = j
	}
	w.WriteString("        - # after the log: the peak, for ever\n")
	last := CapacityWindow{Admit: peak, Reject: rejectNames[rejOverloaded]}
	if len(wins) > 0 {
		last.Reject, last.RetryAfter = wins[len(wins)-1].Reject, wins[len(wins)-1].RetryAfter
	}
	writeAdmit(w, last, window)
}

func writeAdmit(w *bufio.Writer, c CapacityWindow, window time.Duration) {
	if c.Admit > 0 {
		fmt.Fprintf(w, "          admit: %d\n          window: %v\n", c.Admit, window)
	}
	writeReject(w, c)
}

func writeReject(w *bufio.Writer, c CapacityWindow) {
	fmt.Fprintf(w, "          reject: %s\n", c.Reject)
	if c.Reject == rejectNames[rejRateLimited] || c.RetryAfter > 0 {
		fmt.Fprintf(w, "          retry_after: %v\n", c.RetryAfter)
	}
}

// minMixSample is the fewest attempts an error mix's probabilities are
// estimated over: consecutive windows are pooled until they sent this
// many, so that a quiet window's one failure in two does not become a
// phase that fails half of what a counterfactual sends then.
const minMixSample = 100

// writeErrorMix writes the failures of the rejections with as error-mix
// phases: windows pooled until they sent minMixSample attempts (the last
// pool takes the windows left over), each pool's share of each failure
// (to three decimals) its phase, equal neighbours merged.
func (r *Result) writeErrorMix(w *bufio.Writer, with func(rej int) bool) {
	type pool struct {
		from, to int // windows
		mix      string
	}
	mix := func(win *Window) string {
		var parts []string
		for j, n := range win.Rejected {
			if n > 0 && win.Sent > 0 && with(j) {
				if p := float64(n) / float64(win.Sent); p >= 0.0005 {
					parts = append(parts, fmt.Sprintf("{probability: %.3f, reject: %s}", p, rejectNames[j]))
				}
			}
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	// Pools never mix windows that rejected for want of room with those
	// that did not: behind a capacity trace, a failure moved into a full
	// window is one its capacity rejects anyway.
	bound := func(i int) bool { return r.Windows[i].capacityRejections() > 0 }
	var pools []pool
	var sum Window
	from, runStart := 0, 0
	for i := range r.Windows {
		win := &r.Windows[i]
		sum.Sent += win.Sent
		for j, n := range win.Rejected {
			sum.Rejected[j] += n
		}
		runEnds := i == len(r.Windows)-1 || bound(i+1) != bound(i)
		if sum.Sent < minMixSample && !runEnds {
			continue
		}
		if sum.Sent < minMixSample && len(pools) > 0 && pools[len(pools)-1].from >= runStart { // too few left: the run's last pool takes them
			p := &pools[len(pools)-1]
			for k := p.from; k < p.to; k++ {
				sum.Sent += r.Windows[k].Sent
				for j, n := range r.Windows[k].Rejected {
					sum.Rejected[j] += n
				}
			}
			from = p.from
			pools = pools[:len(pools)-1]
		}
		m := mix(&sum)
		if len(pools) > 0 && pools[len(pools)-1].mix == m {
			pools[len(pools)-1].to = i + 1
		} else {
			pools = append(pools, pool{from, i + 1, m})
		}
		sum, from = Window{}, i+1
		if runEnds {
			runStart = i + 1
		}
	}
	for k, p := range pools {
		dur := fmt.Sprintf("duration: %v, ", time.Duration(p.to-p.from)*r.Window)
		if k == len(pools)-1 {
			dur = ""
		}
		fmt.Fprintf(w, "        - {%sfailures: %s}    # %v-%v\n", dur, p.mix, time.Duration(p.from)*r.Window, time.Duration(p.to)*r.Window)
	}
}

// yamlString quotes s when YAML might read it as something else.
func yamlString(s string) string {
	if s != "" && !strings.ContainsAny(s, ":#{}[],&*!|>'\"%@`\n") && strings.TrimSpace(s) == s &&
		!slices.Contains([]string{"true", "false", "null", "yes", "no", "~"}, strings.ToLower(s)) {
		return s
	}
	return fmt.Sprintf("%q", s)
}

// wrapComment writes s as comment lines of at most about 100 columns,
// each starting with pre, the later ones indented two more.
func wrapComment(s, pre string) string {
	var b strings.Builder
	line := pre
	for i, word := range strings.Fields(s) {
		if i > 0 && len(line)+1+len(word) > 100 {
			b.WriteString(line + "\n")
			line = pre + "  "
		} else if i > 0 {
			line += " "
		}
		line += word
	}
	b.WriteString(line + "\n")
	return b.String()
}
