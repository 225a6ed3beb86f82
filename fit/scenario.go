package fit

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// CapacityWindow is the capacity fitted to one window.
type CapacityWindow struct {
	// Admit is the capacity, by the first rule that applies: where the
	// window rejected some requests for want of room (Bound), what it
	// admitted; where it rejected none but got requests (its admissions
	// are only a lower bound), the peak, the most any window of the log
	// admitted; where it got none (Idle), the window before's capacity,
	// as nothing shows a change.
	Admit       int
	Bound, Idle bool
	// Reject is how a request over capacity is rejected (a scenario
	// file's rejection name), RetryAfter its server wait.
	Reject     string
	RetryAfter time.Duration
}

// Capacity fits a capacity to every window (see CapacityWindow).
func (r *Result) Capacity() (wins []CapacityWindow, peak int) {
	var all [numRejects]int
	var waitSum time.Duration
	waits := 0
	for i := range r.Windows {
		w := &r.Windows[i]
		peak = max(peak, w.Admitted)
		for j, n := range w.Rejected {
			all[j] += n
		}
		waitSum += w.waitSum
		waits += w.waits
	}
	defReject := commonCapacityRejection(&all)
	var defWait time.Duration
	if waits > 0 {
		defWait = roundDuration(waitSum / time.Duration(waits))
	}
	for i := range r.Windows {
		w := &r.Windows[i]
		c := CapacityWindow{Admit: peak, Reject: defReject, RetryAfter: defWait}
		switch {
		case w.capacityRejections() > 0:
			c.Admit, c.Bound = w.Admitted, true
			c.Reject = commonCapacityRejection(&w.Rejected)
			if w.waits > 0 {
				c.RetryAfter = roundDuration(w.waitSum / time.Duration(w.waits))
			}
		case w.Sent == 0 && i > 0:
			c = wins[i-1]
			c.Bound, c.Idle = false, true
		}
		if c.Reject != rejectNames[rejRateLimited] && w.waits == 0 && !c.Idle {
			c.RetryAfter = 0
		}
		wins = append(wins, c)
	}
	return wins, peak
}

// commonCapacityRejection is the most frequent rejection for want of room
// (overloaded when there is none).
func commonCapacityRejection(rej *[numRejects]int) string {
	best := rejOverloaded
	for _, j := range []int{rejUnavailable, rejRateLimited} {
		if rej[j] > rej[best] {
			best = j
		}
	}
	return rejectNames[best]
}

// roundDuration rounds to a microsecond, for a readable file.
func roundDuration(d time.Duration) time.Duration { return d.Round(time.Microsecond) }

// LatencyFit is the response time fitted to the attempts' times from sent
// to answered.
type LatencyFit struct {
	// YAML is the distribution as a scenario file writes it.
	YAML string
	// Error is the largest relative difference between the fit's and the
	// log's quantiles (p10, p25, p50, p75, p90, p99).
	Error float64
	// P50, P99 are the log's.
	P50, P99 time.Duration
}

// fitQuantiles are the quantiles a latency fit is measured at.
var fitQuantiles = []float64{0.10, 0.25, 0.50, 0.75, 0.90, 0.99}

// FitLatency fits a fixed time when the log's response times are all
// within 1 % (or 100 µs) of the median, else a lognormal through the
// median and the 99th percentile.
func (r *Result) FitLatency() LatencyFit {
	h := &r.Latency
	f := LatencyFit{P50: quantile(h, 0.5), P99: quantile(h, 0.99)}
	p01 := quantile(h, 0.01)
	spread := f.P99 - p01
	if spread <= time.Duration(max(float64(f.P50)*0.01, float64(100*time.Microsecond))) {
		f.YAML = roundDuration(f.P50).String()
		for _, q := range fitQuantiles {
			f.Error = max(f.Error, relErr(float64(f.P50), h.Quantile(q)))
		}
		return f
	}
	med, p99 := roundDuration(max(f.P50, time.Microsecond)), roundDuration(max(f.P99, f.P50+time.Microsecond))
	f.YAML = fmt.Sprintf("{lognormal: {median: %v, p99: %v}}", med, p99)
	mu := math.Log(float64(med))
	sigma := (math.Log(float64(p99)) - mu) / normalQuantile(0.99)
	for _, q := range fitQuantiles {
		f.Error = max(f.Error, relErr(math.Exp(mu+sigma*normalQuantile(q)), h.Quantile(q)))
	}
	return f
}

// normalQuantile is the standard normal distribution's q-quantile.
func normalQuantile(q float64) float64 { return math.Sqrt2 * math.Erfinv(2*q-1) }

// relErr is |got − want| / want (0 when both are 0).
func relErr(got, want float64) float64 {
	if want == 0 {
		if got == 0 {
			return 0
		}
		return 1
	}
	return math.Abs(got-want) / want
}

// LoadLatencyCorrelation is the correlation, over windows that sent
// something, between the attempts sent and their mean response time: near
// 1 when the server slowed down as load grew (a queue), near 0 when its
// response time did not depend on load.
func (r *Result) LoadLatencyCorrelation() float64 {
	var xs, ys []float64
	for i := range r.Windows {
		if w := &r.Windows[i]; w.Sent > 0 {
			xs = append(xs, float64(w.Sent))
			ys = append(ys, float64(w.latencySum)/float64(w.Sent))
		}
	}
	return correlation(xs, ys)
}

// correlation is Pearson's r (0 when either side does not vary).
func correlation(xs, ys []float64) float64 {
	n := float64(len(xs))
	if n < 3 {
		return 0
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i] / n
		my += ys[i] / n
	}
	var sxy, sxx, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

// WriteArrivals writes the arrival trace, the CSV the trace workload reads.
// When the log's operations all belong to sessions, it is the session
// trace instead (a row per session).
func (r *Result) WriteArrivals(out io.Writer) error {
	if ok, _ := r.chain.chained(); ok {
		return r.chain.write(out, r.Origin, r.Name)
	}
	w := bufio.NewWriter(out)
	fmt.Fprintf(w, "# first attempts of %s, in bins of %v from %s\nstart,count\n", r.Name, r.Resolution, r.Origin.Format(time.RFC3339Nano))
	first := true
	r.EachArrival(func(at time.Duration, n int) {
		if first && at != 0 {
			fmt.Fprintln(w, "0s,0")
		}
		first = false
		fmt.Fprintf(w, "%v,%d\n", at, n)
	})
	if first {
		fmt.Fprintln(w, "0s,0")
	}
	return w.Flush()
}

// indent prefixes every line of s with pre.
func indent(s, pre string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pre + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
