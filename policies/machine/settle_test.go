package machine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unsafe"
)

// recorder is a coordinator that answers Admit from a script and records
// every call; as a Settler it records settlements, as a plain coordinator
// releases.
type recorder struct {
	answers []AdmitKind // Admit's answers in turn; AdmitGrant when run out
	calls   []string
}

func (r *recorder) Admit(now time.Time, a Ask) Admission {
	r.calls = append(r.calls, fmt.Sprintf("admit retry=%v last=%v/%d", a.Retry, a.Last.Class, a.Last.Status))
	k := AdmitGrant
	if len(r.answers) > 0 {
		k, r.answers = r.answers[0], r.answers[1:]
	}
	return Admission{Kind: k, At: now, Reason: StopBudget}
}

func (r *recorder) Observe(_ time.Time, attempt int, out Outcome) {
	r.calls = append(r.calls, fmt.Sprintf("observe %d %v", attempt, out.Class))
}

func (r *recorder) Release(_ time.Time, _ Waiter, sent bool) {
	r.calls = append(r.calls, fmt.Sprintf("release sent=%v", sent))
}

type settleRecorder struct{ recorder }

func (r *settleRecorder) Settle(_ time.Time, s Settlement) {
	r.calls = append(r.calls, fmt.Sprintf("settle retry=%v last=%v/%d sent=%v out=%v/%d", s.Retry, s.Last.Class, s.Last.Status, s.Sent, s.Outcome.Class, s.Outcome.Status))
}

// The Op tells coordinators the previous attempt's outcome (Ask.Last), and
// settles a Settler's grant with the attempt and its outcome, while a plain
// coordinator still gets Release.
func TestOpTellsLastOutcomeAndSettles(t *testing.T) {
	plain := &recorder{}
	settler := &settleRecorder{}
	p := &Plan{Policy: Policy{Backoff: Constant{Wait: time.Second}, MaxAttempts: 5}, Coordinators: []Coordinator{plain, settler}}
	rng := rand.New(rand.NewPCG(1, 2))
	var op Op
	op.Start(p)
	now := t0
	send := func(out Outcome, failed bool) Step {
		t.Helper()
		if st := op.Before(p, Moment{Now: now}, nil, rng); st.Kind != StepSend {
			t.Fatalf("Before: %+v, want send", st)
		}
		return op.After(p, Moment{Now: now}, out, failed, nil, rng)
	}
	send(Outcome{Class: Transient}, true)                  // a timeout: no status
	send(Outcome{Class: Capacity, Status: 529}, true)      // an overload
	send(Outcome{Class: Transient, Status: 1 << 20}, true) // a status beyond 16 bits saturates
	// A later coordinator refuses: the settler's grant goes back unused.
	settler.answers = []AdmitKind{AdmitDeny}
	plain.answers = []AdmitKind{AdmitGrant}
	if st := op.Before(p, Moment{Now: now}, nil, rng); st.Kind != StepStop || st.Reason != StopBudget {
		t.Fatalf("Before: %+v, want stop (budget)", st)
	}
	want := []string{
		"admit retry=false last=success/0", "observe 1 transient", "release sent=true",
		"admit retry=true last=transient/0", "observe 2 capacity", "release sent=true",
		"admit retry=true last=capacity/529", "observe 3 transient", "release sent=true",
		"admit retry=true last=transient/65535", "release sent=false",
	}
	if !slices.Equal(plain.calls, want) {
		t.Errorf("plain coordinator:\n got %q\nwant %q", plain.calls, want)
	}
	wantS := []string{
		"admit retry=false last=success/0", "observe 1 transient", "settle retry=false last=success/0 sent=true out=transient/0",
		"admit retry=true last=transient/0", "observe 2 capacity", "settle retry=true last=transient/0 sent=true out=capacity/529",
		"admit retry=true last=capacity/529", "observe 3 transient", "settle retry=true last=capacity/529 sent=true out=transient/1048576",
		"admit retry=true last=transient/65535",
	}
	if !slices.Equal(settler.calls, wantS) {
		t.Errorf("settler:\n got %q\nwant %q", settler.calls, wantS)
	}

	// Abandoning a granted attempt settles it unused, with what Ask said.
	settler.calls, settler.answers = nil, nil
	op.Start(p)
	plain.answers = []AdmitKind{AdmitPass, AdmitPass}
	settler.answers = []AdmitKind{AdmitGrant, AdmitBlock}
	send(Outcome{Class: RetryAfter, Status: 429}, true)
	settler.calls = nil
	if st := op.Before(p, Moment{Now: now}, nil, rng); st.Kind != StepBlock {
		t.Fatalf("Before: %+v, want block", st)
	}
	op.Abandon(p, now, nil)
	wantA := []string{"admit retry=true last=retry-after/429", "settle retry=true last=retry-after/429 sent=false out=success/0"}
	if !slices.Equal(settler.calls, wantA) {
		t.Errorf("abandoned:\n got %q\nwant %q", settler.calls, wantA)
	}
}

// The simulator keeps millions of Ops in 64-byte records: remembering the
// last outcome must not grow the Op.
func TestOpStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(Op{}); n > 24 {
		t.Errorf("Op is %d bytes, want at most 24", n)
	}
}
