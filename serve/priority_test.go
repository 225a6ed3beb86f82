package serve_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/serve"
	"github.com/retrysim/retrysim/sim"
)

// A reserve shedder on the real clock reads each request's priority from
// x-retrysim-priority: with room for 2 a second and half reserved, one
// default request goes through, the next is shed (503), a critical one
// still goes through, a sheddable one is shed, and a value that is no
// priority is refused with 400 naming the header.
func TestServeReadsThePriorityHeader(t *testing.T) {
	model := &sim.ReserveShedder{Reserve: 0.5, Capacity: 2, Window: time.Second,
		Inner: &sim.CapacityWindows{ResponseTime: sim.Fixed(0), Phases: []sim.Phase{{Admit: 2, Window: time.Second, Reject: rejection529}}}}
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, model)
		for i, c := range []struct {
			priority string
			status   int
		}{{"", 200}, {"default", 503}, {"critical", 200}, {"sheddable", 503}, {"urgent", 400}} {
			req, err := http.NewRequest(http.MethodPost, "http://serve.test/v1/messages", strings.NewReader(okRequest))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("content-type", "application/json")
			if c.priority != "" {
				req.Header.Set(serve.PriorityHeader, c.priority)
			}
			resp, err := (&http.Client{Transport: serve.InMemory(h)}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Fatalf("request %d (priority %q): %d %s, want %d", i, c.priority, resp.StatusCode, body, c.status)
			}
			if c.status == 400 && !strings.Contains(string(body), serve.PriorityHeader) {
				t.Errorf("the refusal does not name the header: %s", body)
			}
		}
	})
}

// A priority-ordered queue decides requests after they arrive: serve
// refuses it, saying so.
func TestServeRefusesThePriorityQueue(t *testing.T) {
	_, err := serve.NewHandler(&sim.Queue{Concurrency: 1, Service: sim.Fixed(time.Millisecond), Priority: sim.PriorityOrder{On: true}})
	var unsupported *serve.UnsupportedError
	if !errors.As(err, &unsupported) || !strings.Contains(err.Error(), "after they arrive") {
		t.Fatalf("got %v, want an UnsupportedError saying the model decides after arrival", err)
	}
}

// validate's own clients send their operations' priorities: in front of
// a shedder that lets 2 non-critical requests a second through of 4,
// a burst of 4 with half of them critical is served whole, as the
// simulation says; clients that sent no priority would have 2 shed.
func TestValidateSendsPriorities(t *testing.T) {
	f, err := scenarios.Parse("p.yaml", []byte(`scenarios:
  - name: prio
    server:
      type: reserve-shedder
      reserve: 0.5
      capacity: 4
      window: 1s
      inner: {type: capacity-windows, response_time: 100ms, phases: [{admit: 4, window: 1s}]}
    clients: {count: 4, priorities: {critical: 0.5}}
    policies: [{name: once, type: immediate, max_attempts: 1}]
`))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenarios[0]
	synctest.Test(t, func(t *testing.T) {
		v := validation(s, 1)
		v.Priorities = s.Priorities
		v.Connect = inMemory
		cs, err := serve.Validate(t.Context(), v)
		if err != nil {
			t.Fatal(err)
		}
		c := cs[0]
		if c.Simulated.Completed != 4 || c.Measured.Completed != 4 || !c.Agree() {
			t.Fatalf("simulated %d completed, measured %d; want 4 and 4, in agreement:\n%s", c.Simulated.Completed, c.Measured.Completed, report(t, cs))
		}
		v.Priorities = nil // what clients without the header meet
		cs, err = serve.Validate(t.Context(), v)
		if err != nil {
			t.Fatal(err)
		}
		if got := cs[0].Measured.Completed; got != 2 {
			t.Errorf("without priorities %d completed, want 2 (the allocation)", got)
		}
	})
}
