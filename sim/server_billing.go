package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/machine"
)

// Billing bills the work of another server model: every request Inner
// answers with a success is billed, a price per request plus a price per
// input and per output token (the request's sizes, or InputTokens and
// OutputTokens when it gives none), whether or not its client still waits
// for the answer: a provider that keeps generating after the client has
// gone (an attempt timeout, the end of a budget) bills the work all the
// same. With BillAbandoned false, a success whose response comes after its
// client stopped waiting (Request.GiveUpAt) is not billed: the provider
// stops when the connection closes. Failures are not billed.
type Billing struct {
	// Prices, >= 0, in any currency unit (say dollars).
	PerRequest, PerInputToken, PerOutputToken float64
	// InputTokens and OutputTokens size requests that give no size.
	InputTokens, OutputTokens int
	// BillAbandoned bills the successes whose client has gone.
	BillAbandoned bool
	// PartialStreams bills a streamed answer (Response.Events, a stream
	// fault) for the part the provider sent: one whose stream was cut,
	// ended by the policy's stream watchdog, or left by its client
	// (Request.GiveUpAt) before its end is billed its
	// per-request price, its input tokens and the output tokens of the
	// content events sent (OutputTokens·sent/events, rounded down), if it
	// sent at least one; BillAbandoned does not apply to streams (the
	// provider stops when the stream is closed). A stream sent whole is
	// billed as any success.
	PartialStreams bool
	Inner          ServerModel
}

// Validate reports the first problem that would make the model meaningless.
func (b *Billing) Validate() error {
	for _, p := range []float64{b.PerRequest, b.PerInputToken, b.PerOutputToken} {
		if !(p >= 0 && p <= MaxPrice) {
			return fmt.Errorf("billing: prices must be between 0 and %g (got %v)", float64(MaxPrice), p)
		}
	}
	switch {
	case b.InputTokens < 0 || b.OutputTokens < 0:
		return fmt.Errorf("billing: negative default token count")
	case b.Inner == nil:
		return fmt.Errorf("billing: no inner server model")
	}
	if err := b.Inner.Validate(); err != nil {
		return err
	}
	if DecidesLater(b.Inner) {
		return fmt.Errorf("billing: the inner %T model decides requests after they arrive; it cannot be billed", b.Inner)
	}
	return nil
}

// MaxPrice bounds each of a Billing's prices, so that a run's cost in
// billing units (1e-9 of the price's unit) fits its counter.
const MaxPrice = 1000

// billingUnit is the counter's unit: 1e-9 of a price's unit.
const billingUnit = 1e9

// Unwrap returns Inner (ModelWrapper).
func (b *Billing) Unwrap() ServerModel { return b.Inner }

// NewServer returns the inner model's state with a bill; the billing
// draws nothing.
func (b *Billing) NewServer(rng *rand.Rand) Server {
	return &billingState{model: b, inner: b.Inner.NewServer(rng)}
}

type billingState struct {
	model  *Billing
	inner  Server
	billed int64
	// abandoned counts the billed successes whose client had gone.
	abandoned int64
	cost      float64 // in the prices' unit
	// With PartialStreams: the streams billed in part and their output
	// tokens, and the bill of the last answer, if a stream, not counted
	// yet (the engine may still say the watchdog ended it: StreamEnded).
	partial, partialTokens int64
	stream                 streamBill
}

// streamBill is a streamed answer's bill: sent of events content events.
type streamBill struct {
	on            bool
	sent, events  int
	whole         bool // sent whole: billed as any success
	input, output int
}

// Arrive lets the inner model decide, and bills its success.
func (s *billingState) Arrive(now time.Duration, req Request) Response {
	s.commitStream()
	resp := s.inner.Arrive(now, req)
	if s.model.PartialStreams && resp.Events > 0 && !resp.Pending {
		s.billStream(now, req, resp)
		return resp
	}
	if resp.Outcome.Class != policies.Success {
		return resp
	}
	gone := req.GiveUpAt > 0 && resp.At > req.GiveUpAt
	if gone && !s.model.BillAbandoned {
		return resp
	}
	in, out := s.sizes(req)
	s.billed++
	if gone {
		s.abandoned++
	}
	s.cost += s.model.PerRequest + s.model.PerInputToken*float64(in) + s.model.PerOutputToken*float64(out)
	return resp
}

// sizes are the request's tokens, or the model's defaults.
func (s *billingState) sizes(req Request) (in, out int) {
	in, out = req.InputTokens, req.OutputTokens
	if in == 0 {
		in = s.model.InputTokens
	}
	if out == 0 {
		out = s.model.OutputTokens
	}
	return in, out
}

// billStream notes the bill of a streamed answer sent at now: the content
// events that come before its cut and its client's give-up.
func (s *billingState) billStream(now time.Duration, req Request, resp Response) {
	events := int(resp.Events)
	var t machine.StreamTimeline
	switch {
	case resp.Stream != nil:
		t = *resp.Stream
	case resp.Outcome.Class == policies.Success:
		gap := (resp.At - now) / time.Duration(events+1) // as the engine's watchdog reads it
		t = machine.StreamTimeline{Content: events, First: gap, Gap: gap, End: resp.At - now}
	default:
		return
	}
	b := streamBill{on: true, sent: t.Content, events: events, whole: resp.Stream == nil}
	if req.GiveUpAt > 0 && resp.At > req.GiveUpAt {
		b.sent, b.whole = min(b.sent, eventsBefore(t, req.GiveUpAt-now)), false
	}
	b.input, b.output = s.sizes(req)
	s.stream = b
}

// Unwrap returns the inner model's state (Wrapper).
func (s *billingState) Unwrap() Server { return s.inner }

// StreamEnded is told that the policy's watchdog ended the last answer
// after events content events (StreamEnder).
func (s *billingState) StreamEnded(resp Response, events int) {
	if s.stream.on {
		s.stream.sent, s.stream.whole = min(s.stream.sent, events), false
	}
}

// commitStream counts the last streamed answer's bill.
func (s *billingState) commitStream() {
	b := s.stream
	if !b.on {
		return
	}
	s.stream = streamBill{}
	out := b.output
	if !b.whole {
		if b.sent == 0 {
			return
		}
		out = int(int64(b.output) * int64(b.sent) / int64(b.events))
		s.partial++
		s.partialTokens += int64(out)
	}
	s.billed++
	s.cost += s.model.PerRequest + s.model.PerInputToken*float64(b.input) + s.model.PerOutputToken*float64(out)
}

// ReportCounters reports the bill (the engine asks the inner model's
// counters first):
// billing.billed (requests), billing.abandoned (those whose client had
// gone) and billing.cost (in 1e-9 of the prices' unit, rounded); with
// PartialStreams, billing.partial (streams billed in part) and
// billing.partial_output_tokens (their output tokens).
func (s *billingState) ReportCounters(c *Counters) {
	s.commitStream()
	c.Add("billing.billed", s.billed)
	c.Add("billing.abandoned", s.abandoned)
	c.Add("billing.cost", int64(math.Round(min(s.cost*billingUnit, math.MaxInt64/2))))
	if s.model.PartialStreams {
		c.Add("billing.partial", s.partial)
		c.Add("billing.partial_output_tokens", s.partialTokens)
	}
}

// BillingUnit is what one unit of the billing.cost counter is worth in the
// prices' unit.
const BillingUnit = 1 / billingUnit

var _ ServiceModel = (*Billing)(nil)

// MeanService forwards Inner's (ServiceModel); ok is false when it has none.
func (b *Billing) MeanService() (time.Duration, bool) {
	if s, ok := b.Inner.(ServiceModel); ok {
		return s.MeanService()
	}
	return 0, false
}

// ObservedService returns a copy of b whose inner model is observed
// (ServiceModel); b itself when the inner model cannot be.
func (b *Billing) ObservedService(observe ServiceObserver) ServerModel {
	s, ok := b.Inner.(ServiceModel)
	if !ok {
		return b
	}
	c := *b
	c.Inner = s.ObservedService(observe)
	return &c
}
