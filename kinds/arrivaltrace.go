package kinds

import (
	"fmt"
	"io"

	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
)

// The trace workload (sim.ArrivalTrace): operations start at recorded times.
func registerArrivalTrace() {
	registerWorkload(&Kind{Name: "trace", Fields: []string{"trace"},
		About: "operations start at recorded times, read from a CSV file of start,count rows (what retrysim fit writes from a log)"},
		workloadFuncs[*sim.ArrivalTrace]{
			decode: func(d *schema.Decoder, m *schema.Mapping, path string) *sim.ArrivalTrace {
				if m.Node() != nil && !m.Has("trace") {
					m.Errorf("trace", "missing: the path of a CSV file of start,count rows")
				}
				if d.Read == nil { // from disk: an arrival trace may be larger than a scenario file
					d.Read = readArrivalTrace
					defer func() { d.Read = nil }()
				}
				rows := traceRows(d, m, func(r io.Reader) ([]*sim.ArrivalTrace, error) {
					w, err := sim.ArrivalsFromCSV(r)
					return []*sim.ArrivalTrace{w}, err
				})
				if len(rows) == 1 {
					return rows[0]
				}
				return &sim.ArrivalTrace{}
			},
			describe: func(w *sim.ArrivalTrace) string {
				return fmt.Sprintf("%d operations starting at recorded times (a trace), one operation each", len(w.Starts))
			},
			// The starts are never changed after decoding: copies share them.
			clone: func(w *sim.ArrivalTrace) *sim.ArrivalTrace { c := *w; return &c },
			scale: func(w *sim.ArrivalTrace, f float64) (*sim.ArrivalTrace, error) {
				if f != 1 {
					return w, fmt.Errorf("a recorded trace of arrivals cannot be scaled")
				}
				return w, nil
			},
		})
}

// The session-trace workload (sim.SessionTrace): recorded sessions, each
// call its recorded gap after the one before it ends.
func registerSessionTrace() {
	registerWorkload(&Kind{Name: "session-trace", Fields: []string{"trace"},
		About: "recorded sessions: each call starts its recorded gap after the session's previous call ends, read from a CSV file of start,gaps rows (what retrysim fit writes from a log with session ids)"},
		workloadFuncs[*sim.SessionTrace]{
			decode: func(d *schema.Decoder, m *schema.Mapping, path string) *sim.SessionTrace {
				if m.Node() != nil && !m.Has("trace") {
					m.Errorf("trace", "missing: the path of a CSV file of start,gaps rows")
				}
				if d.Read == nil {
					d.Read = readArrivalTrace
					defer func() { d.Read = nil }()
				}
				rows := traceRows(d, m, func(r io.Reader) ([]*sim.SessionTrace, error) {
					w, err := sim.SessionsFromCSV(r)
					return []*sim.SessionTrace{w}, err
				})
				if len(rows) == 1 {
					return rows[0]
				}
				return &sim.SessionTrace{}
			},
			describe: func(w *sim.SessionTrace) string {
				return fmt.Sprintf("%d recorded sessions of %d calls in all, each call its recorded gap after the one before it ends", len(w.Sessions), w.Operations())
			},
			metrics: func(*sim.SessionTrace) []string {
				return []string{"sessions.completed", "sessions.failed", "sessions.resumed"}
			},
			clone: func(w *sim.SessionTrace) *sim.SessionTrace { c := *w; return &c },
			scale: func(w *sim.SessionTrace, f float64) (*sim.SessionTrace, error) {
				if f != 1 {
					return w, fmt.Errorf("recorded sessions cannot be scaled")
				}
				return w, nil
			},
		})
}

// MaxArrivalTrace bounds an arrival trace's file: a row per millisecond
// with arrivals, about 20 bytes each (a scenario file and a capacity trace
// are bounded by schema.MaxFileSize).
const MaxArrivalTrace = 512 << 20

// readArrivalTrace reads an arrival trace from disk, refusing a file larger
// than MaxArrivalTrace.
func readArrivalTrace(path string) ([]byte, error) {
	data, tooBig, err := schema.ReadUpTo(path, MaxArrivalTrace)
	if tooBig {
		return nil, fmt.Errorf("file is larger than %d MiB, the limit for an arrival trace", MaxArrivalTrace>>20)
	}
	return data, err
}
