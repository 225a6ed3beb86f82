package plot

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/retrysim/retrysim/runs"
	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/sim"
)

// The timeline draws a capacity line for servers that can say their
// capacity (a queue: workers per mean service time), where it binds (20
// requests a second reach the second phase's 20), and none for those
// that cannot (an error mix).
func TestTimelineOfOtherServers(t *testing.T) {
	for _, tt := range []struct {
		server   string
		capacity bool
	}{
		{"{type: queue, phases: [{duration: 2s, concurrency: 4}, {concurrency: 2}], service: {exponential: 100ms}}", true},
		{"{type: error-mix, failures: [{probability: 0.2}]}", false},
	} {
		src := "scenarios:\n  - name: s\n    server: " + tt.server +
			"\n    clients: {type: open-loop, rate: 20, until: 4s, max_attempts: 3}\n    policies: [{name: full-jitter}]\n"
		f, err := scenarios.Parse("p.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		s := f.Scenarios[0]
		if b := runs.DefaultBucket(s.Server); b != time.Second {
			t.Errorf("%s: bucket %v", tt.server, b)
		}
		if b := runs.DefaultBucket(&sim.Contention{Network: sim.Fixed(time.Millisecond)}); b != 100*time.Millisecond {
			t.Errorf("contention: bucket %v, want its time scale, 100ms", b)
		}
		d, err := runs.CollectPlotData(context.Background(), s, 1, 2, time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		fig, err := TimelineFigure(d)
		if err != nil {
			t.Fatal(err)
		}
		var svg bytes.Buffer
		if err := fig.Write(&svg, SVG); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(svg.String(), ">capacity, where it binds<"); got != tt.capacity {
			t.Errorf("%s: capacity in the legend %v, want %v", tt.server, got, tt.capacity)
		}
	}
}
