package sim

import (
	"math"
	"time"
)

// CapacityStep is a server's capacity from At on, until the next step:
// Requests per Per (Requests 0: it admits nothing).
type CapacityStep struct {
	At       time.Duration
	Requests float64
	Per      time.Duration
}

// CapacityProfile is an optional interface of a ServerModel that can say
// how many requests it can admit over time, for plots (the timeline's
// capacity line). A model without a fixed capacity (ErrorMix) does not
// implement it.
type CapacityProfile interface {
	// Capacity returns the model's capacity in steps from t = 0, At
	// increasing; the last step holds for ever.
	Capacity() []CapacityStep
}

// TimeScaler is an optional interface of a ServerModel without a capacity
// (CapacityProfile) whose runs last far less or far more than seconds: it
// says what time bucket its timelines read best at.
type TimeScaler interface {
	TimeScale() time.Duration
}

// TimeScale is a contention server's timeline bucket: 100 ms, about ten
// message delays of the AWS study (its runs take 2 to 60 s).
func (c *Contention) TimeScale() time.Duration { return 100 * time.Millisecond }

// Capacity returns one step per phase: Admit requests per Window.
func (s *CapacityWindows) Capacity() []CapacityStep {
	steps := make([]CapacityStep, 0, len(s.Phases))
	at := time.Duration(0)
	for i, p := range s.Phases {
		st := CapacityStep{At: at, Per: p.Window}
		if p.Admit > 0 {
			st.Requests = float64(p.Admit)
		}
		steps = append(steps, st)
		if i == len(s.Phases)-1 || p.Duration == 0 {
			break
		}
		at += p.Duration
	}
	return steps
}

// Capacity returns, per phase of workers, the requests the workers can
// serve per second at the mean service time; nil when the mean is not
// known (a Distribution of another type) or is 0.
func (q *Queue) Capacity() []CapacityStep {
	mean, ok := MeanOf(q.Service)
	if !ok || mean <= 0 {
		return nil
	}
	perSecond := func(workers int) float64 { return float64(workers) * float64(time.Second) / float64(mean) }
	if len(q.Phases) == 0 {
		return []CapacityStep{{Requests: perSecond(q.Concurrency), Per: time.Second}}
	}
	var steps []CapacityStep
	at := time.Duration(0)
	for _, p := range q.Phases {
		steps = append(steps, CapacityStep{At: at, Requests: perSecond(p.Concurrency), Per: time.Second})
		if p.Duration == 0 {
			break
		}
		at += p.Duration
	}
	return steps
}

// Capacity returns the inner model's capacity capped by the requests per
// minute, or only the latter (as requests per second) when the inner
// model has none; nil when neither limits requests.
func (m *RateLimit) Capacity() []CapacityStep {
	var inner []CapacityStep
	if p, ok := m.Inner.(CapacityProfile); ok {
		inner = p.Capacity()
	}
	if m.RequestsPerMinute == 0 {
		return inner
	}
	if len(inner) == 0 {
		return []CapacityStep{{Requests: float64(m.RequestsPerMinute) / 60, Per: time.Second}}
	}
	out := make([]CapacityStep, len(inner))
	for i, st := range inner {
		if st.Per > 0 {
			st.Requests = math.Min(st.Requests, float64(m.RequestsPerMinute)*float64(st.Per)/float64(time.Minute))
		}
		out[i] = st
	}
	return out
}

// MeanOf returns the mean of a distribution of this package's types, and
// false for another type.
func MeanOf(d Distribution) (time.Duration, bool) {
	switch d := d.(type) {
	case Fixed:
		return d.Mean(), true
	case Exponential:
		return d.Mean, true
	case Uniform:
		return d.Mean(), true
	case LogNormal:
		return d.Mean(), true
	case FoldedNormal:
		return d.MeanDraw(), true
	}
	return 0, false
}
