package plot

import (
	"slices"
	"testing"
	"time"
)

// The load figure draws, per policy, the attempts sent per bucket as bars
// (first attempts under the total), the goodput and the in-flight level as
// lines, and a line of local rejections only for a policy whose retry
// controls rejected something (controls-outage: not full-jitter or
// anthropic-sdk, which have none).
func TestLoadFigureSeries(t *testing.T) {
	d := plotData(t, "controls-outage", 1)
	fig, err := LoadFigure(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(fig.Panels) != len(d.Timelines) {
		t.Fatalf("%d panels for %d policies", len(fig.Panels), len(d.Timelines))
	}
	withLocal := map[string]bool{}
	for pi, p := range fig.Panels {
		tl := &d.Timelines[pi]
		if p.Title.Text != tl.Policy {
			t.Fatalf("panel %d is %q, want %q", pi, p.Title.Text, tl.Policy)
		}
		ls, err := newLoadSeries(d.Server, tl, time.Duration(tl.Buckets())*tl.Bucket, axisDurationUnit(1000))
		if err != nil {
			t.Fatal(err)
		}
		for i := range tl.Buckets() {
			if ls.retries.Bins[i].Weight != float64(tl.Offered(i)) || ls.firsts.Bins[i].Weight != float64(tl.FirstAttempts[i]) {
				t.Fatalf("%s, bucket %d: bars %v over %v, want %d over %d", tl.Policy, i, ls.retries.Bins[i].Weight, ls.firsts.Bins[i].Weight, tl.Offered(i), tl.FirstAttempts[i])
			}
			if ls.inFlight.XYs[i+1].Y != float64(tl.InFlight[i]) {
				t.Fatalf("%s, bucket %d: in flight drawn at %v, counted %d", tl.Policy, i, ls.inFlight.XYs[i+1].Y, tl.InFlight[i])
			}
		}
		if ls.capacity == nil {
			t.Fatalf("%s: no capacity line", tl.Policy)
		}
		goodput, local := ls.goodput, ls.local
		for i, c := range tl.Completed {
			if goodput.XYs[i].Y != float64(c) {
				t.Fatalf("%s, bucket %d: goodput drawn at %v, completed %d", tl.Policy, i, goodput.XYs[i].Y, c)
			}
		}
		if local != nil {
			withLocal[tl.Policy] = true
			for i := range tl.Buckets() {
				if local.XYs[i].Y != float64(tl.LocalRejections(i)) {
					t.Fatalf("%s, bucket %d: local rejections drawn at %v, counted %d", tl.Policy, i, local.XYs[i].Y, tl.LocalRejections(i))
				}
			}
		}
	}
	var got []string
	for _, tl := range d.Timelines {
		if withLocal[tl.Policy] {
			got = append(got, tl.Policy)
		}
	}
	if want := []string{"aws-standard", "grpc-throttled", "sre", "breaker"}; !slices.Equal(got, want) {
		t.Errorf("local-rejection lines for %v, want %v", got, want)
	}
}
