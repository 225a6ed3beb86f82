package sim

import (
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
// capacity line). A model without a fixed capacity (an error mix) does not
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

// A MeanDrawer is a Distribution that knows the mean of its draws (every
// distribution of this package does).
type MeanDrawer interface {
	Distribution
	MeanDraw() time.Duration
}

// MeanOf returns the mean of a distribution's draws, and false when it
// does not know it (it is not a MeanDrawer).
func MeanOf(d Distribution) (time.Duration, bool) {
	if m, ok := d.(MeanDrawer); ok {
		return m.MeanDraw(), true
	}
	return 0, false
}
