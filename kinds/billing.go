package kinds

import (
	"fmt"
	"strings"
	"time"

	"github.com/retrysim/retrysim/metrics"
	"github.com/retrysim/retrysim/schema"
	"github.com/retrysim/retrysim/sim"
	"github.com/retrysim/retrysim/stats"
)

// The billing server (sim.Billing): the bill for an inner server's work.
func registerBilling() {
	// Requests billed, and those of them whose client had gone; billed
	// requests and cost per completed operation.
	billed := metrics.RegisterCount(&metrics.Metric{Name: "billing.billed", ShedReason: metrics.SpentWork, Quantity: "requests billed", Unit: metrics.Count, Better: stats.LowerIsBetter, Headline: true})
	abandoned := metrics.RegisterCount(&metrics.Metric{Name: "billing.abandoned", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter})
	perCompletion := metrics.RegisterCounted(&metrics.Metric{Name: "billing.billed_per_completion", ShedReason: metrics.SpentWork, Unit: metrics.Ratio, Better: stats.LowerIsBetter, JSONDecimals: 4, Missing: "nothing completed", PresentWith: metrics.Completed},
		func(r *sim.Result) (float64, bool) {
			v, _ := r.Counters.Get("billing.billed")
			return float64(v) / float64(r.Completed), r.Completed > 0
		})
	cost := metrics.RegisterCounted(&metrics.Metric{Name: "billing.cost_per_completion", ShedReason: metrics.SpentWork, Unit: metrics.Ratio, Better: stats.LowerIsBetter, JSONDecimals: 6, Missing: "nothing completed", PresentWith: metrics.Completed},
		func(r *sim.Result) (float64, bool) {
			v, _ := r.Counters.Get("billing.cost")
			return float64(v) * sim.BillingUnit / float64(r.Completed), r.Completed > 0
		})
	// Streams billed in part (partial_streams) and their output tokens.
	partial := metrics.RegisterCount(&metrics.Metric{Name: "billing.partial", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter})
	partialTokens := metrics.RegisterCount(&metrics.Metric{Name: "billing.partial_output_tokens", ShedReason: metrics.SpentWork, Unit: metrics.Count, Better: stats.LowerIsBetter})
	registerServer(&Kind{Name: "billing", Fields: []string{"per_request", "per_input_token", "per_output_token", "input_tokens", "output_tokens", "bill_abandoned", "partial_streams", "inner"},
		About: "bills an inner server's successes (per request and token), work finished after its client left included"},
		serverFuncs[*sim.Billing]{
			decode:   decodeBilling,
			describe: describeBilling,
			minResponse: func(b *sim.Billing) time.Duration {
				return MinResponse(b.Inner)
			},
			instant: func(b *sim.Billing) bool {
				k := serverKindOf(b.Inner)
				return k != nil && k.instant(b.Inner)
			},
			metrics: func(b *sim.Billing) []string {
				names := []string{billed.Name, abandoned.Name, perCompletion.Name, cost.Name}
				if b.PartialStreams {
					names = append(names, partial.Name, partialTokens.Name)
				}
				return names
			},
			inner: func(b *sim.Billing) []sim.ServerModel { return []sim.ServerModel{b.Inner} },
			clone: func(b *sim.Billing) *sim.Billing {
				c := *b
				c.Inner = cloneServer(b.Inner)
				return &c
			},
			scale: func(b *sim.Billing, f float64) (*sim.Billing, error) {
				var err error
				b.Inner, err = scaleServer(b.Inner, f)
				return b, err
			},
		})
}

// decodeBilling reads the prices and the inner server.
func decodeBilling(d *schema.Decoder, m *schema.Mapping, path string) *sim.Billing {
	price := func(k string) float64 { return m.Number(k, 0, 0, sim.MaxPrice) }
	b := &sim.Billing{
		PerRequest:     price("per_request"),
		PerInputToken:  price("per_input_token"),
		PerOutputToken: price("per_output_token"),
		InputTokens:    int(m.Integer("input_tokens", 0, 0, 1<<31-1)),
		OutputTokens:   int(m.Integer("output_tokens", 0, 0, 1<<31-1)),
		BillAbandoned:  m.Boolean("bill_abandoned", true),
		PartialStreams: m.Boolean("partial_streams", false),
	}
	needOneOf(m, "price", "per_request", "per_input_token", "per_output_token")
	b.Inner = decodeInner(d, m, "the server whose work is billed, such as {type: queue, ...}")
	return b
}

func describeBilling(b *sim.Billing) Table {
	var prices []string
	for _, p := range []struct {
		v    float64
		what string
	}{{b.PerRequest, "per request"}, {b.PerInputToken, "per input token"}, {b.PerOutputToken, "per output token"}} {
		if p.v > 0 {
			prices = append(prices, fmt.Sprintf("%g %s", p.v, p.what))
		}
	}
	who := "work finished after its client left included"
	if !b.BillAbandoned {
		who = "only answers a client still waits for"
	}
	if b.PartialStreams {
		who += "; a stream cut or left before its end for the events sent"
	}
	inner, about := describeInner(b.Inner)
	inner.Caption = fmt.Sprintf("Server: billed %s for each success (%s), in front of %s", strings.Join(prices, ", "), who, about)
	return inner
}
