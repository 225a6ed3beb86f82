package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// AdmissionControl is Envoy's admission control filter
// (envoy.filters.http.admission_control) in front of another server
// model: it rejects a request with probability
//
//	min(MaxRejectionProbability, max(0, (n − s/SuccessRateThreshold) / (n + 1)) ^ (1/Aggression))
//
// where n and s are the requests and successes recorded over the
// sampling window. As Envoy's source does (admission_control.cc,
// thread_local_controller.cc):
//
//   - a request is recorded when its answer comes, a success if its status
//     is below 500 (the default success criteria); a rejected request is not
//     recorded, nor one whose client stopped waiting before the answer (a
//     reset stream);
//   - the window is a list of one-second buckets, each opened at the first
//     record or query at least a second after the newest opened; buckets at
//     least SamplingWindow old are dropped before every record and query;
//   - below RPSThreshold requests a second (the window's requests over the
//     larger of SamplingWindow and the oldest bucket's age, whole seconds,
//     integer division; computed before the query drops old buckets) nothing
//     is rejected;
//   - the draw: reject iff 10⁴·p > r mod 10⁴, r from the server stream,
//     drawn only when p > 0 (so a healthy server's draws are unchanged).
//
// One controller serves all clients of the run (Envoy keeps one per
// worker thread). A rejection is a 503 at once.
type AdmissionControl struct {
	// SuccessRateThreshold is the lowest success rate at which nothing is
	// rejected, in [0.01, 1] (Envoy's sr_threshold, in percent there;
	// default 95 %).
	SuccessRateThreshold float64
	// Aggression >= 1 bends the curve: 1 is linear in the failure rate,
	// higher rejects more at higher success rates (Envoy treats less than 1
	// as 1; refused here).
	Aggression float64
	// MaxRejectionProbability caps the probability, in [0, 1] (Envoy's
	// default 80 %).
	MaxRejectionProbability float64
	// SamplingWindow is the look-back, whole seconds >= 1 s (Envoy's
	// default 30 s).
	SamplingWindow time.Duration
	// RPSThreshold: below this many requests a second nothing is rejected.
	RPSThreshold int
	// Inner decides the requests admitted.
	Inner ServerModel
}

// MaxRPSThreshold bounds AdmissionControl.RPSThreshold (Envoy's is a uint32).
const MaxRPSThreshold = math.MaxUint32

// Validate reports the first problem that would make the model meaningless.
func (m *AdmissionControl) Validate() error {
	switch {
	case !(m.SuccessRateThreshold >= 0.01 && m.SuccessRateThreshold <= 1):
		return fmt.Errorf("admission control: success rate threshold must be in [0.01, 1] (got %v)", m.SuccessRateThreshold)
	case !(m.Aggression >= 1 && m.Aggression <= 1e6):
		return fmt.Errorf("admission control: aggression must be between 1 and 1e6 (got %v; Envoy treats less than 1 as 1)", m.Aggression)
	case !(m.MaxRejectionProbability >= 0 && m.MaxRejectionProbability <= 1):
		return fmt.Errorf("admission control: max rejection probability must be in [0, 1] (got %v)", m.MaxRejectionProbability)
	case m.SamplingWindow < time.Second || m.SamplingWindow%time.Second != 0 || m.SamplingWindow > Horizon:
		return fmt.Errorf("admission control: sampling window must be whole seconds, at least 1 s (got %v)", m.SamplingWindow)
	case m.RPSThreshold < 0 || int64(m.RPSThreshold) > MaxRPSThreshold:
		return fmt.Errorf("admission control: rps threshold must be between 0 and %d (got %d)", int64(MaxRPSThreshold), m.RPSThreshold)
	case m.Inner == nil:
		return fmt.Errorf("admission control: no inner server model")
	}
	if err := m.Inner.Validate(); err != nil {
		return err
	}
	if DecidesLater(m.Inner) {
		return fmt.Errorf("admission control: the inner %T model decides requests after they arrive; it cannot sit behind admission control", m.Inner)
	}
	return nil
}

// Unwrap returns Inner (ModelWrapper).
func (m *AdmissionControl) Unwrap() ServerModel { return m.Inner }

// NewServer returns the controller of one run around the inner model's
// state; both draw from rng.
func (m *AdmissionControl) NewServer(rng *rand.Rand) Server {
	return &admissionState{model: m, rng: rng, inner: m.Inner.NewServer(rng)}
}

type admissionState struct {
	model *AdmissionControl
	rng   *rand.Rand
	inner Server
	// buckets[head:] are the window's buckets, oldest first; requests and
	// successes their sums.
	buckets             []admissionBucket
	head                int
	requests, successes int64
	// ok and failed hold when the answers of admitted requests not yet
	// recorded come (answers due at one instant go to one bucket, in any
	// order).
	ok, failed durationHeap
	stats      admissionStats
}

type admissionBucket struct {
	opened              time.Duration
	requests, successes int64
}

type admissionStats struct {
	Rejected, Admitted, Recorded, Successes int64
}

// Arrive records the answers due by now, then rejects the request with
// the window's probability or lets the inner model decide it.
func (s *admissionState) Arrive(now time.Duration, req Request) Response {
	for {
		success := len(s.ok) > 0 && (len(s.failed) == 0 || s.ok[0] <= s.failed[0])
		h := &s.failed
		if success {
			h = &s.ok
		}
		if len(*h) == 0 || (*h)[0] > now {
			break
		}
		s.update((*h)[0])
		h.pop()
		b := &s.buckets[len(s.buckets)-1]
		b.requests++
		s.requests++
		s.stats.Recorded++
		if success {
			b.successes++
			s.successes++
			s.stats.Successes++
		}
	}
	if s.averageRPS(now) >= int64(s.model.RPSThreshold) {
		s.update(now)
		if p := s.probability(); p > 0 && 1e4*p > float64(s.rng.Uint64()%10_000) {
			s.stats.Rejected++
			return Response{Outcome: policies.Outcome{Class: policies.Capacity, Status: 503}, At: now, Ticket: ownTicket}
		}
	}
	s.stats.Admitted++
	resp := s.inner.Arrive(now, req)
	if req.GiveUpAt == 0 || resp.At <= req.GiveUpAt {
		if o := resp.Outcome; o.Class == policies.Success || (o.Status != 0 && o.Status < 500) {
			s.ok.push(resp.At)
		} else {
			s.failed.push(resp.At)
		}
	}
	return resp
}

// probability is the rejection probability of the window's counts.
func (s *admissionState) probability() float64 {
	return admissionProbability(s.requests, s.successes, s.model.SuccessRateThreshold, s.model.Aggression, s.model.MaxRejectionProbability)
}

// admissionProbability is Envoy's rejection probability for n requests
// and s successes: min(max, max(0, (n − s/threshold)/(n + 1))^(1/aggression)).
func admissionProbability(n, s int64, threshold, aggression, most float64) float64 {
	p := (float64(n) - float64(s)/threshold) / float64(n+1)
	if p <= 0 {
		return 0
	}
	if aggression != 1 {
		p = math.Pow(p, 1/aggression)
	}
	return math.Min(p, most)
}

// update drops the buckets at least a window old at now, and opens a
// bucket if there is none or the newest is at least a second old.
func (s *admissionState) update(now time.Duration) {
	for s.head < len(s.buckets) && now-s.buckets[s.head].opened >= s.model.SamplingWindow {
		b := s.buckets[s.head]
		s.requests -= b.requests
		s.successes -= b.successes
		s.head++
	}
	if s.head == len(s.buckets) {
		s.buckets, s.head = s.buckets[:0], 0
	} else if s.head > len(s.buckets)/2 {
		n := copy(s.buckets, s.buckets[s.head:])
		s.buckets, s.head = s.buckets[:n], 0
	}
	if len(s.buckets) == 0 || now-s.buckets[len(s.buckets)-1].opened >= time.Second {
		s.buckets = append(s.buckets, admissionBucket{opened: now})
	}
}

// averageRPS is the window's requests over the larger of the window and
// the oldest bucket's age, in whole seconds (Envoy's averageRps, which
// drops no bucket).
func (s *admissionState) averageRPS(now time.Duration) int64 {
	if s.head == len(s.buckets) || s.requests == 0 {
		return 0
	}
	secs := max(s.model.SamplingWindow, now-s.buckets[s.head].opened) / time.Second
	return s.requests / int64(secs)
}

// Unwrap returns the inner model's state (Wrapper).
func (s *admissionState) Unwrap() Server { return s.inner }

// ReportCounters reports admission.rejected (requests the controller
// rejected), admission.admitted, and admission.recorded and
// admission.successes (answers recorded in the window, and those that
// were successes).
func (s *admissionState) ReportCounters(c *Counters) {
	c.Add("admission.rejected", s.stats.Rejected)
	c.Add("admission.admitted", s.stats.Admitted)
	c.Add("admission.recorded", s.stats.Recorded)
	c.Add("admission.successes", s.stats.Successes)
}
