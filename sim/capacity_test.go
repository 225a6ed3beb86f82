package sim

import (
	"reflect"
	"testing"
)

func TestCapacityProfiles(t *testing.T) {
	windows := &CapacityWindows{Phases: []Phase{{Duration: 2 * sec}, {Duration: 3 * sec, Admit: 6, Window: sec}, {Admit: 10, Window: 500 * ms}}}
	if got, want := windows.Capacity(), []CapacityStep{{0, 0, 0}, {2 * sec, 6, sec}, {5 * sec, 10, 500 * ms}}; !reflect.DeepEqual(got, want) {
		t.Errorf("windows: %v, want %v", got, want)
	}
	queue := &Queue{Service: Exponential{Mean: 100 * ms}, Phases: []WorkerPhase{{Duration: 20 * sec, Concurrency: 10}, {Concurrency: 5}}}
	if got, want := queue.Capacity(), []CapacityStep{{0, 100, sec}, {20 * sec, 50, sec}}; !reflect.DeepEqual(got, want) {
		t.Errorf("queue: %v, want %v", got, want)
	}
	if got := (&Queue{Concurrency: 4, Service: LogNormal{Median: sec, P99: sec}}).Capacity(); !reflect.DeepEqual(got, []CapacityStep{{0, 4, sec}}) {
		t.Errorf("fixed queue: %v", got)
	}
	limited := &RateLimit{RequestsPerMinute: 3000, Inner: queue}
	if got, want := limited.Capacity(), []CapacityStep{{0, 50, sec}, {20 * sec, 50, sec}}; !reflect.DeepEqual(got, want) {
		t.Errorf("rate limit over a queue: %v, want %v", got, want)
	}
	mix := FailWithProbability(0.1, overloaded, Fixed(ms))
	if _, ok := ServerModel(mix).(CapacityProfile); ok {
		t.Error("an error mix says it has a capacity")
	}
	if got := (&RateLimit{RequestsPerMinute: 120, Inner: mix}).Capacity(); !reflect.DeepEqual(got, []CapacityStep{{0, 2, sec}}) {
		t.Errorf("rate limit over an error mix: %v", got)
	}
	if got := (&RateLimit{InputTokensPerMinute: 120, Inner: mix}).Capacity(); got != nil {
		t.Errorf("token limit over an error mix: %v", got)
	}
	if _, ok := MeanOf(nil); ok {
		t.Error("mean of nil")
	}
}
