package sim

import (
	"fmt"
	"io"
	"math/rand/v2"
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
