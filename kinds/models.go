package kinds

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrysim/retrysim/internal/suggest"
	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// The server and workload kinds. The first of each is the default, for a
// server or clients mapping without a type field.

func registerModels() {
	registerServers()
	registerWorkloads()
}

// What several server models count (as named counters, sim.Counters):
// requests whose work was thrown away, served by a queue after their
// client had stopped waiting or failed mid-stream by an error mix; the
// worker (or streaming) time they took, summed; the output tokens streamed
// before a mid-stream failure. Reported only for scenarios whose server
// counts them; in tables the server's metrics share a column, server, as
// part=value.
var serverWasted, serverWastedMs, serverWastedOutputTokens *metrics.Metric

func registerServers() {
	serverWasted = metrics.RegisterCount(&metrics.Metric{Name: "server.wasted", ShedReason: metrics.SpentWork, Quantity: "requests whose work was wasted", Unit: metrics.Count, Better: stats.LowerIsBetter, Headline: true})
	serverWastedMs = metrics.RegisterCounted(&metrics.Metric{Name: "server.wasted_ms", ShedReason: metrics.SpentWork, Unit: metrics.Milliseconds, Better: stats.LowerIsBetter},
		metrics.CounterValue("server.wasted_time", time.Millisecond))
	serverWastedOutputTokens = metrics.RegisterCount(&metrics.Metric{Name: "server.wasted_output_tokens", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter})
	registerCapacityWindows()
	registerQueue()
	registerErrorMix()
	registerRateLimit()
	registerContention()
	registerPool()
	registerCrash()
	registerBilling()
	registerReserveShedder()
	registerAdmissionControl()
}

func registerWorkloads() {
	registerBurst()
	registerOpenLoop()
	registerClosedLoop()
	registerAgentSessions()
	registerArrivalTrace()
	registerSessionTrace()
	registerGroups()
}

// cloneServer copies a server model as its kind does; a model of no kind
// is returned as it is.
func cloneServer(s sim.ServerModel) sim.ServerModel {
	if k := serverKindOf(s); k != nil {
		return k.clone(s)
	}
	return s
}

// cloneWorkload copies a workload as its kind does.
func cloneWorkload(w sim.Workload) sim.Workload {
	if k := workloadKindOf(w); k != nil {
		return k.clone(w)
	}
	return w
}

// MinResponse is the shortest time a server model takes to answer, as its
// kind knows it; 0 when it does not.
func MinResponse(s sim.ServerModel) time.Duration {
	if k := serverKindOf(s); k != nil {
		return k.minResponse(s)
	}
	return 0
}

// ExtraEventsPerAttempt is how many engine events an attempt may cost a
// server model beyond the work estimate's per-attempt events: a model that
// decides requests after they arrive may wake a request more than once.
func ExtraEventsPerAttempt(s sim.ServerModel) float64 {
	if k := serverKindOf(s); k != nil {
		return k.extraEvents(s)
	}
	return 0
}

// kindNames lists the names of a category's kinds.
// didYouMean is ` (did you mean "NAME"?)` for the name of list (names
// separated by ", ", each maybe followed by a note in brackets) nearest to
// got, or "".
func didYouMean(got, list string) string {
	var names []string
	for _, item := range strings.Split(list, ", ") {
		name, _, _ := strings.Cut(item, " (")
		names = append(names, name)
	}
	return suggest.DidYouMean(got, names)
}

func kindNames(c Category) string {
	var names []string
	for _, k := range Kinds(c) {
		names = append(names, k.Name)
	}
	return strings.Join(names, ", ")
}

// Describers.

// phaseRow begins the row of phase i of n, which starts at start and lasts
// d: its number, from and until.
func phaseRow(i, n int, start, d time.Duration) []string {
	until := "forever"
	if i < n-1 {
		until = (start + d).String()
	}
	return []string{strconv.Itoa(i + 1), start.String(), until}
}

func describeRejection(r sim.Rejection) string {
	s := fmt.Sprintf("%d (%v)", r.Status, r.Class)
	if r.RetryAfter > 0 {
		s += fmt.Sprintf(", retry-after %v", r.RetryAfter)
	}
	return s
}

// ListedKinds are the kinds 'retrysim list' names beyond the registered
// categories: the distributions a duration can draw from, the stream
// faults an error mix can give, and the rules of every policy (among
// them the stream watchdog's timeouts), each as a line of names.
func ListedKinds() []struct{ Title, Names string } {
	faults := slices.Sorted(maps.Keys(sim.StreamFaultKinds()))
	return []struct{ Title, Names string }{
		{"Distributions (response_time, service, think, network: {NAME: ...})", strings.Join(distributionNames(), ", ")},
		{"Stream faults (error-mix failures: [{stream_fault: {kind: NAME, after_events, for}}])", strings.Join(faults, ", ")},
		{"Rules of every policy (stream_idle_timeout and stream_first_byte_timeout are the stream watchdog)", strings.Join(rulesFields, ", ")},
	}
}
