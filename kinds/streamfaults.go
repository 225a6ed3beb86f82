package kinds

import (
	"fmt"
	"slices"
	"strings"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// Stream faults (sim.StreamFault), a failure of an error mix, and what a
// run that meets them counts.
var streamFaults, streamWatchdog, streamWasted *metrics.Metric

func registerStreamFaults() {
	streamFaults = metrics.RegisterCount(&metrics.Metric{Name: "server.stream_faults", ShedReason: metrics.SpentWork, Quantity: "streams that stalled or were cut", Unit: metrics.Count, Better: stats.LowerIsBetter})
	streamWatchdog = metrics.RegisterCount(&metrics.Metric{Name: "stream.watchdog", ShedReason: metrics.SpentWork, Quantity: "stalled streams the watchdog ended", Unit: metrics.Count, Better: stats.LowerIsBetter})
	streamWasted = metrics.RegisterCount(&metrics.Metric{Name: "stream.wasted_events", ShedReason: metrics.SpentWork, Quantity: "content events of failed streams", Unit: metrics.Count, Better: stats.LowerIsBetter})
}

// decodeStreamFault reads a failure's stream_fault: {kind, after_events,
// for}; ok is false when the failure has none.
func decodeStreamFault(d *schema.Decoder, fm *schema.Mapping) (sim.StreamFault, bool) {
	n := fm.Get("stream_fault")
	if n == nil {
		return sim.StreamFault{}, false
	}
	if fm.Has("reject") || fm.Has("retry_after") {
		fm.Errorf("stream_fault", "a stream fault is the failure: drop reject and retry_after")
	}
	sm := d.Mapping(n, fm.Field("stream_fault"))
	kinds := sim.StreamFaultKinds()
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	slices.Sort(names)
	var f sim.StreamFault
	name := sm.Str("kind", "")
	k, ok := kinds[name]
	if !ok {
		sm.Errorf("kind", "unknown stream fault %q%s; choose one of %s", name, didYouMean(name, strings.Join(names, ", ")), strings.Join(names, ", "))
	}
	f.Kind = k
	f.After = int(sm.Integer("after_events", 0, 0, 10_000))
	f.For = sm.Duration("for", 0)
	if ok {
		// Blame the field: after_events 0 suits every kind, so an error
		// that remains without it is about for.
		noAfter := f
		noAfter.After = 0
		if err := noAfter.Validate(); err != nil {
			sm.Errorf("for", "%v", err)
		} else if err := f.Validate(); err != nil {
			sm.Errorf("after_events", "%v", err)
		}
	}
	sm.Finish()
	return f, true
}

// describeStreamFault says what a fault does, for the set-up table.
func describeStreamFault(f sim.StreamFault) string {
	switch f.Kind {
	case sim.StallFirstByte:
		return fmt.Sprintf("no byte for %v, then the connection is cut", f.For)
	case sim.StallAfter:
		return fmt.Sprintf("%d content events, then nothing for %v, then cut", f.After, f.For)
	case sim.PingOnly:
		return fmt.Sprintf("only pings for %v, then cut", f.For)
	}
	return fmt.Sprintf("%d content events, then cut without message_stop", f.After)
}
