package machine

import (
	"testing"
	"time"
)

// recordingWaiter notes its wakes without telling its operation, as Do's
// waiter does when the budget timer wins the race with the wake.
type recordingWaiter struct{ wakes []bool }

func (w *recordingWaiter) Wake(_ time.Time, granted bool) { w.wakes = append(w.wakes, granted) }

// The limiter, not the driver's timing, knows that a waiter woken without a
// slot holds none: abandoning it before its Op saw the wake frees nothing.
func TestLimiterWaiterWokenWithoutSlotHoldsNothing(t *testing.T) {
	lim, _ := NewLimiter(1, 0)
	plan := Plan{Policy: Policy{Deadline: time.Second}, Coordinators: []Coordinator{lim}}
	var a, b Op
	a.Start(&plan)
	b.Start(&plan)
	wa, wb := &recordingWaiter{}, &recordingWaiter{}
	if st := a.Before(&plan, Moment{Now: at(0)}, wa, nil); st.Kind != StepSend {
		t.Fatalf("a: %v, want a send", st.Kind)
	}
	if st := b.Before(&plan, Moment{Now: at(0)}, wb, nil); st.Kind != StepBlock {
		t.Fatalf("b: %v, want to queue", st.Kind)
	}
	// a's attempt ends after b's latest start (1 s): b is woken without a slot.
	a.After(&plan, Moment{Now: at(2 * time.Second), Since: 2 * time.Second}, Outcome{}, false, nil, nil)
	if len(wb.wakes) != 1 || wb.wakes[0] {
		t.Fatalf("b's wakes %v, want one without a slot", wb.wakes)
	}
	if n := lim.InFlight(); n != 0 {
		t.Fatalf("%d slots taken after a's attempt, want 0", n)
	}
	// A third operation takes the free slot; then b, which never saw its
	// wake, is abandoned. That must not free the third one's slot.
	var c Op
	c.Start(&plan)
	if st := c.Before(&plan, Moment{Now: at(2 * time.Second)}, &recordingWaiter{}, nil); st.Kind != StepSend {
		t.Fatalf("c: %v, want a send", st.Kind)
	}
	b.Abandon(&plan, at(2*time.Second), wb)
	if n := lim.InFlight(); n != 1 {
		t.Fatalf("%d slots taken after b was abandoned, want c's 1", n)
	}
	if n := lim.pending(); n != 0 {
		t.Fatalf("the limiter still tracks %d waiters", n)
	}
}

// An operation woken without a slot gives back what earlier coordinators
// granted its attempt before it asks them again: a ratio budget does not
// count the same first attempt twice.
func TestWokenWithoutSlotReturnsEarlierGrants(t *testing.T) {
	lim, _ := NewLimiter(1, 0)
	budget, _ := NewRatioBudget(RatioBudgetConfig{})
	plan := Plan{Coordinators: []Coordinator{budget, lim}}
	var a, b Op
	a.Start(&plan)
	b.Start(&plan)
	if st := a.Before(&plan, Moment{Now: at(0)}, &recordingWaiter{}, nil); st.Kind != StepSend {
		t.Fatalf("a: %v, want a send", st.Kind)
	}
	wb := &recordingWaiter{}
	// b accepts starts up to 1 s (the driver's cutoff).
	if st := b.Before(&plan, Moment{Now: at(0), Cutoff: at(time.Second)}, wb, nil); st.Kind != StepBlock {
		t.Fatalf("b: %v, want to queue", st.Kind)
	}
	a.After(&plan, Moment{Now: at(2 * time.Second)}, Outcome{}, false, nil, nil)
	b.Woken(false)
	// The driver asks again with a later cutoff: b may still start.
	if st := b.Before(&plan, Moment{Now: at(2 * time.Second), Cutoff: at(3 * time.Second)}, wb, nil); st.Kind != StepSend {
		t.Fatalf("b after its wake: %v, want a send", st.Kind)
	}
	if requests, _ := budget.Counts(at(2 * time.Second)); requests != 2 {
		t.Fatalf("the budget counts %d first attempts, want 2 (a's and b's)", requests)
	}
}

// toyQueue is a blocking coordinator written to the older contract: it
// queues every ask and counts the Releases it gets. It is not an
// UnslottedTracker.
type toyQueue struct {
	waiting  []Waiter
	releases int
}

func (q *toyQueue) Admit(_ time.Time, a Ask) Admission {
	q.waiting = append(q.waiting, a.Waiter)
	return Admission{Kind: AdmitBlock}
}
func (q *toyQueue) Observe(time.Time, int, Outcome) {}
func (q *toyQueue) Release(time.Time, Waiter, bool) { q.releases++ }

// A blocking coordinator that does not track unslotted waiters is not told
// again after it woke an operation without a grant (its hold ended with
// the wake), while what an earlier coordinator granted is given back.
func TestWokenWithoutSlotUntrackedCoordinator(t *testing.T) {
	q := &toyQueue{}
	budget, _ := NewRatioBudget(RatioBudgetConfig{})
	plan := Plan{Coordinators: []Coordinator{budget, q}}
	var o Op
	o.Start(&plan)
	w := &recordingWaiter{}
	if st := o.Before(&plan, Moment{Now: at(0), Cutoff: at(time.Second)}, w, nil); st.Kind != StepBlock {
		t.Fatalf("%v, want to queue", st.Kind)
	}
	o.Woken(false)
	if st := o.Before(&plan, Moment{Now: at(2 * time.Second), Cutoff: at(time.Second)}, w, nil); st.Kind != StepStop {
		t.Fatalf("after a wake without a grant: %v, want a stop", st.Kind)
	}
	if q.releases != 0 {
		t.Errorf("the untracked coordinator got %d Releases after its wake without a grant, want 0", q.releases)
	}
	if requests, _ := budget.Counts(at(2 * time.Second)); requests != 0 {
		t.Errorf("the budget still counts %d first attempts for an operation that never sent one", requests)
	}
}
