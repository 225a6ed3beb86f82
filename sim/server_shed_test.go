package sim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/retrysim/retrysim/policies"
)

// burstTick sends, at now, nonCritical default requests and then critical
// ones (the hardest order for critical work: the non-critical ones came
// first and took what they could), and returns the answers of each.
func burstTick(s Server, now time.Duration, nonCritical, critical int) (nc, cr []Response) {
	for range nonCritical {
		nc = append(nc, s.Arrive(now, Request{}))
	}
	for range critical {
		cr = append(cr, s.Arrive(now, Request{Priority: PriorityCritical}))
	}
	return nc, cr
}

func succeeded(rs []Response) (n int) {
	for _, r := range rs {
		if r.Outcome.Class == policies.Success {
			n++
		}
	}
	return n
}

// Stripe's rule under 2x overload, usage per window: capacity windows
// admit 10 a second; each second 20 requests arrive at once, 2 critical
// (exactly the 20 % reserve) after 18 non-critical. Every critical one
// is served, and the non-critical ones get 8 a second, 1 − reserve.
// Without the shedder the same bursts leave critical requests nothing.
func TestReserveShedderKeepsTheReservePerWindow(t *testing.T) {
	inner := &CapacityWindows{ResponseTime: Fixed(100 * time.Millisecond),
		Phases: []Phase{{Admit: 10, Window: time.Second, Reject: overloaded}}}
	shed := &ReserveShedder{Reserve: 0.2, Capacity: 10, Window: time.Second, Inner: inner}
	if err := shed.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Duration{0, 999 * time.Millisecond} { // bursts at the window's start, or its end
		s, bare := shed.NewServer(ServerRand(1)), inner.NewServer(ServerRand(1))
		var ncOK, crOK, bareCrOK int
		const windows = 50
		for w := range windows {
			now := time.Duration(w)*time.Second + at
			nc, cr := burstTick(s, now, 18, 2)
			ncOK += succeeded(nc)
			crOK += succeeded(cr)
			_, bcr := burstTick(bare, now, 18, 2)
			bareCrOK += succeeded(bcr)
			for _, r := range nc[8:] {
				if r.Outcome.Status != 503 || r.At != now {
					t.Fatalf("burst at %v: a non-critical request over the allocation got %+v, want a 503 at once", now, r)
				}
			}
		}
		if crOK != 2*windows || ncOK != 8*windows {
			t.Errorf("bursts at +%v: critical served %d of %d, non-critical %d (want %d: 1 − reserve of capacity)", at, crOK, 2*windows, ncOK, 8*windows)
		}
		if bareCrOK != 0 {
			t.Errorf("without the shedder the critical requests after the burst got %d successes; the test shows nothing", bareCrOK)
		}
		var c Counters
		s.(CounterReporter).ReportCounters(&c)
		if n, _ := c.Get("shed.shed"); n != 10*windows {
			t.Errorf("shed.shed = %d, want %d", n, 10*windows)
		}
		if n, _ := c.Get("shed.critical_failed"); n != 0 {
			t.Errorf("shed.critical_failed = %d, want 0", n)
		}
	}
}

// Usage in flight, in front of 10 workers with a fixed 100 ms service:
// every 100 ms 18 non-critical and then 2 critical requests arrive (2x
// overload, critical exactly at the reserve). Critical requests never
// wait for a worker, and 8 non-critical ones are served per 100 ms.
func TestReserveShedderKeepsTheReserveInFlight(t *testing.T) {
	q := &Queue{Concurrency: 10, Service: Fixed(100 * time.Millisecond)}
	shed := &ReserveShedder{Reserve: 0.2, Capacity: 10, Inner: q}
	s := shed.NewServer(ServerRand(1))
	var ncOK int
	const ticks = 100
	for k := range ticks {
		now := time.Duration(k) * 100 * time.Millisecond
		nc, cr := burstTick(s, now, 18, 2)
		ncOK += succeeded(nc)
		for _, r := range cr {
			if r.Outcome.Class != policies.Success || r.At != now+100*time.Millisecond {
				t.Fatalf("at %v a critical request got %+v, want served at once (done at %v)", now, r, now+100*time.Millisecond)
			}
		}
	}
	if ncOK != 8*ticks {
		t.Errorf("non-critical served %d, want %d", ncOK, 8*ticks)
	}
	// Without the shedder the non-critical ones fill the queue first and
	// the critical ones wait behind them.
	bare := q.NewServer(ServerRand(1))
	_, cr := burstTick(bare, 0, 18, 2)
	if cr[0].At == 100*time.Millisecond {
		t.Errorf("without the shedder a critical request after 18 others was served at once; the test shows nothing")
	}
}

// Random service and Poisson arrivals: critical at exactly the reserve's
// rate (0.2 of the workers' 100 a second), the rest non-critical, at 2x
// and 10x overload. Every critical request is served (the queue is
// unbounded). The non-critical ones hold at most 8 of 10 workers, each
// slot for a service (mean 100 ms), any wait behind critical ones over
// their reserve, and the gap to the next non-critical arrival: so their
// goodput is under 8 / (100 ms + gap) a second, and nears 1 − reserve
// as overload shortens the gap.
func TestReserveShedderGoodputUnderRandomLoad(t *testing.T) {
	mean := 100 * time.Millisecond
	goodput := func(perSecond float64) float64 {
		q := &Queue{Concurrency: 10, Service: Exponential{Mean: mean}}
		shed := &ReserveShedder{Reserve: 0.2, Capacity: 10, Inner: q}
		s := shed.NewServer(ServerRand(7))
		arrivals := rand.New(rand.NewPCG(7, 8))
		const horizon = 600 * time.Second
		var now time.Duration
		var crSent int
		var waitSum time.Duration
		for now < horizon {
			now += time.Duration(arrivals.ExpFloat64() / perSecond * float64(time.Second))
			critical := arrivals.Float64() < 20/perSecond
			req := Request{}
			if critical {
				req.Priority = PriorityCritical
				crSent++
			}
			r := s.Arrive(now, req)
			if critical {
				if r.Outcome.Class != policies.Success {
					t.Fatalf("a critical request at %v failed: %+v", now, r)
				}
				waitSum += r.At - now
			}
		}
		var c Counters
		s.(CounterReporter).ReportCounters(&c)
		if crOK, _ := c.Get("shed.critical_ok"); int(crOK) != crSent {
			t.Errorf("critical served %d of %d", crOK, crSent)
		}
		if m := waitSum / time.Duration(crSent); m > 130*time.Millisecond {
			t.Errorf("critical requests took %v on average, want near the 100 ms service", m)
		}
		ok, _ := c.Get("shed.noncritical_ok")
		g := float64(ok) / horizon.Seconds() / 100 // share of the workers' rate
		gap := 1 / (perSecond - 20)
		if bound := 8 / (mean.Seconds() + gap) / 100; g > bound || g < 0.65 {
			t.Errorf("at %v a second non-critical goodput %.3f of capacity, want in [0.65, %.3f]", perSecond, g, bound)
		}
		return g
	}
	if g2, g10 := goodput(200), goodput(1000); g10 <= g2 {
		t.Errorf("non-critical goodput %.3f at 10x overload, not above %.3f at 2x", g10, g2)
	} else {
		t.Logf("non-critical goodput: %.3f of capacity at 2x overload, %.3f at 10x (1 − reserve = 0.8)", g2, g10)
	}
}

func TestReserveShedderValidate(t *testing.T) {
	inner := &CapacityWindows{ResponseTime: Fixed(0), Phases: []Phase{{Reject: overloaded}}}
	for _, m := range []*ReserveShedder{
		{Reserve: 1, Capacity: 10, Inner: inner},
		{Reserve: -0.1, Capacity: 10, Inner: inner},
		{Reserve: 0.2, Capacity: 0, Inner: inner},
		{Reserve: 0.2, Capacity: 10},
		{Reserve: 0.2, Capacity: 10, Window: -1, Inner: inner},
		{Reserve: 0.2, Capacity: 10, Inner: &Queue{Concurrency: 1, Service: Fixed(1), LIFO: AdaptiveLIFO{Interval: 1}}},
	} {
		if m.Validate() == nil {
			t.Errorf("%+v: no error", m)
		}
	}
	if got := (&ReserveShedder{Reserve: 0.2, Capacity: 10}).Allocation(); got != 8 {
		t.Errorf("allocation of 10 with reserve 0.2 = %d, want 8", got)
	}
}
